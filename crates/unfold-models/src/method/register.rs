//! A model type's registration, written once for every method: a model implements
//! [`Registered`] (its method's description, its declared parameters and its fit) and the
//! registry lists it with one line, [`registered::<M>()`](registered). Reading and checking
//! the settings, boxing the model and decoding model files are [`Registration`]'s, the same
//! for every method.

use super::declare::{Checked, Declared};
use super::{decode_whole, FitData, Method, MethodInfo, Model, Named, Settings};
use serde::de::DeserializeOwned;
use std::marker::PhantomData;
use unfold_core::{Observer, Result};

/// A fitted model type that the registry fits and decodes.
pub trait Registered: Model + DeserializeOwned + Sized + 'static {
    /// The method's typed parameters; their specs are the method's parameters.
    type Params: Declared;

    /// The method's name, family and description, and what it offers beyond a fit
    /// ([`MethodInfo::evidence`], [`MethodInfo::projects`], [`MethodInfo::takes_graph`]);
    /// the parameters are added from [`Registered::Params`].
    fn info() -> MethodInfo;

    /// Fits the model to `data` with checked parameters, reporting the iterations of an
    /// iterative fit to `observer`.
    fn fit(
        params: &Checked<Self::Params>,
        data: &FitData<'_>,
        observer: &dyn Observer,
    ) -> Result<Self>;

    /// The model from the payload of a file of format `version`: by default the current
    /// layout, every byte used; a model whose layout changed reads its older layouts here.
    fn from_payload(payload: &[u8], version: u32) -> Result<Self> {
        let _ = version;
        decode_whole(payload, "model")
    }
}

impl<M: Registered> Named for M {
    fn method(&self) -> &'static str {
        M::info().name
    }
}

/// The [`Method`] of a [`Registered`] model type.
pub struct Registration<M>(PhantomData<fn() -> M>);

/// The method of the model type `M`, for [`crate::registry::Registry::register`].
pub fn registered<M: Registered>() -> Box<dyn Method> {
    Box::new(Registration::<M>(PhantomData))
}

impl<M: Registered> Method for Registration<M> {
    fn info(&self) -> MethodInfo {
        M::info().params(M::Params::specs())
    }

    fn fit(
        &self,
        data: &FitData<'_>,
        settings: &Settings,
        observer: &dyn Observer,
    ) -> Result<Box<dyn Model>> {
        let params = M::Params::read_checked(settings)?;
        Ok(Box::new(M::fit(&params, data, observer)?))
    }

    fn decode(&self, payload: &[u8]) -> Result<Box<dyn Model>> {
        self.decode_version(payload, unfold_core::MODEL_FORMAT_VERSION)
    }

    /// [`Registered::from_payload`], then [`Model::validate`].
    fn decode_version(&self, payload: &[u8], version: u32) -> Result<Box<dyn Model>> {
        let model = M::from_payload(payload, version)?;
        model.validate()?;
        Ok(Box::new(model))
    }
}
