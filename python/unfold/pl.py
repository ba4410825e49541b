"""Plots of fitted results in AnnData objects, in scanpy's style. ``matplotlib`` is an
optional dependency (``pip install unfold[plot]``)."""

import numpy as np


def trajectory(adata, key="ddrtree", color="pseudotime", components=(0, 1), ax=None, size=None):
    """The cells of ``unfold.tl.ddrtree(adata)`` in its latent space, coloured by
    ``color`` (``"pseudotime"``, ``"state"``, or any column of ``adata.obs``), with the
    learned tree over its centres and its branch points (ringed dots).

    ``components`` picks the two latent axes drawn (0-based). Returns the matplotlib
    ``Axes``; draws on ``ax`` when given, else on a new figure.
    """
    import matplotlib.pyplot as plt

    if key not in adata.uns or f"X_{key}" not in adata.obsm:
        raise KeyError(f"adata has no `{key}` fit; run unfold.tl.ddrtree(adata, key_added={key!r}) first")
    z = np.asarray(adata.obsm[f"X_{key}"])
    a, b = components
    if max(a, b) >= z.shape[1] or min(a, b) < 0:
        raise ValueError(f"components {components} are not axes of the {z.shape[1]}-D latent space")
    uns = adata.uns[key]
    column = color if color in adata.obs else f"{key}_{color}"
    if column not in adata.obs:
        raise KeyError(
            f"no `{color}` to colour by: pass a column of adata.obs, or 'pseudotime' or "
            "'state' after an ordering (unfold.tl.ddrtree with order=True)"
        )
    values = adata.obs[column]
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 4.5))
    s = size if size is not None else max(2.0, 30000.0 / max(len(z), 1) ** 1.2)
    categorical = str(values.dtype) in ("category", "object") or column.endswith("_state")
    if categorical:
        groups = np.asarray(values)
        labels = np.unique(groups)
        cmap = plt.get_cmap("tab20" if len(labels) > 10 else "tab10")
        for i, label in enumerate(labels):
            cells = groups == label
            ax.scatter(z[cells, a], z[cells, b], s=s, color=cmap(i % cmap.N), label=str(label),
                       linewidths=0)
        ax.legend(title=color, markerscale=max(1.0, 12.0 / s), fontsize="small", frameon=False)
    else:
        points = ax.scatter(z[:, a], z[:, b], s=s, c=np.asarray(values, dtype=float),
                            cmap="viridis", linewidths=0)
        plt.colorbar(points, ax=ax, label=color)
    centres = np.asarray(uns["centres"])
    for i, j in np.asarray(uns["tree"])[:, :2].astype(int):
        ax.plot(centres[[i, j], a], centres[[i, j], b], color="black", linewidth=1.2)
    branch = np.asarray(uns.get("branch_points", []), dtype=int)
    if branch.size:
        ax.scatter(centres[branch, a], centres[branch, b], s=70, facecolors="white",
                   edgecolors="black", linewidths=2, zorder=3, label="branch points")
    ax.set_xlabel(f"{key} {a + 1}")
    ax.set_ylabel(f"{key} {b + 1}")
    return ax
