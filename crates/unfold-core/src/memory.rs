//! The memory a dense method may use, and the refusal of a fit that would need more.
//!
//! Methods whose cost stays cubic (DRILL's graphical lasso over n x n, MVU's semidefinite
//! program, the exact LL-LVM) know their peak memory as a function of n before they
//! allocate anything large. They compare it with a [`MemoryLimit`] and, when it does not
//! fit, return [`Error::OverMemoryLimit`] naming the memory needed, the limit and where it
//! came from, the largest n that fits and the scalable alternative, instead of being killed
//! by the operating system halfway through.
//!
//! The limit, in order of precedence: one given by the caller ([`MemoryLimit::given`], in
//! a method's parameters); the process's limit ([`MemoryLimit::set_process`], which the
//! command line's global `--max-memory` and the Python package's `set_max_memory` set);
//! the environment variable [`MAX_MEMORY_ENV`] (`UNFOLD_MAX_MEMORY`,
//! bytes with an optional suffix K, M, G or T, e.g. `4G`); otherwise the machine's
//! available memory ([`MemoryLimit::machine`]): `MemAvailable` of `/proc/meminfo`, or the
//! room left under a cgroup memory limit when that is lower, or [`ASSUMED_MEMORY`] when
//! neither can be read (then the message says it was assumed).

use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::RwLock;

/// The process's memory limit, when one was set ([`MemoryLimit::set_process`]).
static PROCESS_LIMIT: RwLock<Option<MemoryLimit>> = RwLock::new(None);

/// The environment variable that sets the memory limit: bytes with an optional suffix
/// K, M, G or T (powers of 1024), e.g. `UNFOLD_MAX_MEMORY=4G`.
pub const MAX_MEMORY_ENV: &str = "UNFOLD_MAX_MEMORY";

/// The memory assumed available when the machine's cannot be read: 8 GiB.
pub const ASSUMED_MEMORY: u64 = 8 << 30;

/// A number of bytes, displayed in binary units with one decimal (`"1.5 GiB"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ByteSize(pub u64);

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
        if self.0 < 1024 {
            return write!(f, "{} B", self.0);
        }
        let mut value = self.0 as f64 / 1024.0;
        let mut unit = 0;
        while value >= 1024.0 && unit + 1 < UNITS.len() {
            value /= 1024.0;
            unit += 1;
        }
        write!(f, "{value:.1} {}", UNITS[unit])
    }
}

/// Where a [`MemoryLimit`] came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LimitSource {
    /// `MemAvailable` of `/proc/meminfo`.
    MemAvailable,
    /// A cgroup memory limit less the cgroup's working set; holds the limit file's path.
    Cgroup(String),
    /// The environment variable [`MAX_MEMORY_ENV`].
    Environment,
    /// Given by the caller; holds how the user gave it (e.g. `"--max-memory"`).
    Given(String),
    /// Nothing could be read: [`ASSUMED_MEMORY`] is assumed.
    Assumed,
}

impl fmt::Display for LimitSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LimitSource::MemAvailable => write!(f, "MemAvailable in /proc/meminfo"),
            LimitSource::Cgroup(path) => {
                write!(f, "the cgroup limit {path} less the cgroup's working set")
            }
            LimitSource::Environment => write!(f, "{MAX_MEMORY_ENV}"),
            LimitSource::Given(what) => write!(f, "{what}"),
            LimitSource::Assumed => write!(
                f,
                "assumed: the machine's available memory could not be read"
            ),
        }
    }
}

impl LimitSource {
    /// How a user raises a limit of this source.
    fn how_to_raise(&self) -> String {
        match self {
            LimitSource::Given(what) => format!("raise {what}"),
            _ => format!("set {MAX_MEMORY_ENV} (e.g. {MAX_MEMORY_ENV}=64G)"),
        }
    }
}

/// Why a fit was refused ([`Error::OverMemoryLimit`]): what it would need, the limit, and
/// what to do.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{method} on {n} points would need about {needed} of memory ({holds}), more than the limit of {limit} ({limit_source}); {}. Use {alternative}; or, only if that much memory is free, {raise}", .scaling.fits(*.max_n))]
pub struct MemoryRefusal {
    pub method: String,
    pub n: usize,
    pub needed: ByteSize,
    /// What the memory would hold (the footprint's formula in words).
    pub holds: String,
    pub limit: ByteSize,
    /// Where the limit came from (MemAvailable, a cgroup, UNFOLD_MAX_MEMORY, a flag).
    pub limit_source: LimitSource,
    /// The largest number of points that fits under the limit (by `scaling`).
    pub max_n: usize,
    /// How the need at other sizes than `n` was found, and so what `max_n` promises.
    pub scaling: Scaling,
    pub alternative: String,
    /// How to raise the limit.
    pub raise: String,
}

/// How a [`MemoryRefusal`] found the need at other sizes than the one refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scaling {
    /// From the footprint's formula in n: `max_n` is the largest n that fits.
    Formula,
    /// The need on this data scaled in proportion to the points (a sparse factor's fill,
    /// known from the symbolic analysis of this graph only). Fill grows at least as fast as
    /// the points (nested dissection on a graph of local dimension d >= 2 fills
    /// `O(n^(2 - 2/d))` values), so a subsample of `max_n` points needs no more than that
    /// share, and usually less: more may fit.
    Proportional,
}

impl Scaling {
    /// The refusal's clause on how many points fit.
    fn fits(self, max_n: usize) -> String {
        match self {
            Scaling::Formula => format!("at most {max_n} points fit"),
            Scaling::Proportional => format!(
                "{max_n} points or more fit (this data's need scaled in proportion to the \
                 points: a sparse factor fills at least that fast, so a subsample of that \
                 size should need no more)"
            ),
        }
    }
}

/// The most memory, in bytes, a fit may use, and where that number came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryLimit {
    pub bytes: u64,
    pub source: LimitSource,
}

/// The peak memory of a dense method on `n` points, for [`MemoryLimit::check`].
pub struct Footprint<'a> {
    /// The method's name, as the user knows it (e.g. `"DRILL"`).
    pub method: &'a str,
    /// The number of points.
    pub n: usize,
    /// The peak memory in bytes on `m` points, non-decreasing in `m`, for the same settings
    /// (it also gives the largest n that fits).
    pub bytes: &'a dyn Fn(usize) -> u64,
    /// What the memory holds, in words (e.g. `"13 dense n x n matrices"`).
    pub holds: String,
    /// The scalable alternative, in words (e.g. `"meu, a sparse random field"`).
    pub alternative: &'a str,
}

impl MemoryLimit {
    /// A limit of `bytes` given by the caller; `what` says how the user gave it (e.g.
    /// `"--max-memory"`), for the error message.
    pub fn given(bytes: u64, what: impl Into<String>) -> Self {
        MemoryLimit {
            bytes,
            source: LimitSource::Given(what.into()),
        }
    }

    /// The limit of `given` if there is one, otherwise [`MemoryLimit::from_env_or_machine`].
    ///
    /// # Errors
    /// A malformed [`MAX_MEMORY_ENV`].
    pub fn resolve(given: Option<&MemoryLimit>) -> Result<Self> {
        match given {
            Some(limit) => Ok(limit.clone()),
            None => MemoryLimit::from_env_or_machine(),
        }
    }

    /// Sets (or, with `None`, clears) the limit of every fit in this process that is not
    /// given its own: the command line's global `--max-memory` sets it once, before any
    /// fit. It takes precedence over [`MAX_MEMORY_ENV`] and the machine's memory.
    pub fn set_process(limit: Option<MemoryLimit>) {
        *PROCESS_LIMIT.write().unwrap_or_else(|e| e.into_inner()) = limit;
    }

    /// The limit set by [`MemoryLimit::set_process`], if any.
    pub fn process() -> Option<MemoryLimit> {
        PROCESS_LIMIT
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The process's limit ([`MemoryLimit::set_process`]) if one is set, otherwise
    /// [`MAX_MEMORY_ENV`] if it is set, otherwise [`MemoryLimit::machine`].
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] naming `UNFOLD_MAX_MEMORY` when it is set but is not a
    /// positive size.
    pub fn from_env_or_machine() -> Result<Self> {
        if let Some(limit) = MemoryLimit::process() {
            return Ok(limit);
        }
        match std::env::var(MAX_MEMORY_ENV) {
            Ok(text) => Ok(MemoryLimit {
                bytes: parse_size(&text, MAX_MEMORY_ENV)?,
                source: LimitSource::Environment,
            }),
            Err(std::env::VarError::NotPresent) => Ok(MemoryLimit::machine()),
            Err(std::env::VarError::NotUnicode(value)) => Err(Error::invalid(
                MAX_MEMORY_ENV,
                format!("{value:?} is not text; give bytes with an optional suffix K, M, G or T, e.g. {MAX_MEMORY_ENV}=4G"),
            )),
        }
    }

    /// The memory this process can still use: the lower of `MemAvailable` (Linux
    /// `/proc/meminfo`) and the room left under the process's cgroup memory limits (v2
    /// `memory.max`, v1 `memory.limit_in_bytes`, at its own cgroup and every ancestor, less
    /// the working set: usage without inactive file cache, which the kernel reclaims), or
    /// [`ASSUMED_MEMORY`] when neither can be read (other systems).
    pub fn machine() -> Self {
        let meminfo = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|text| mem_available(&text));
        let cgroup = std::fs::read_to_string("/proc/self/cgroup")
            .ok()
            .and_then(|text| cgroup_room(&text, Path::new("/sys/fs/cgroup")));
        lowest(meminfo, cgroup)
    }

    /// Refuses a fit whose footprint exceeds the limit, before it allocates anything large.
    ///
    /// # Errors
    /// [`Error::OverMemoryLimit`] naming the method, n, the memory needed, the limit and its
    /// source, the largest n that fits and the alternative.
    pub fn check(&self, footprint: &Footprint<'_>) -> Result<()> {
        self.check_scaled(footprint, Scaling::Formula)
    }

    /// [`MemoryLimit::check`] of a need known on this data only, `bytes` on `n` points (a
    /// sparse factor's predicted fill): the refusal scales it in proportion to the points
    /// ([`Scaling::Proportional`]).
    ///
    /// # Errors
    /// As [`MemoryLimit::check`].
    pub fn check_proportional(
        &self,
        method: &str,
        n: usize,
        bytes: u64,
        holds: String,
        alternative: &str,
    ) -> Result<()> {
        let scaled = |m: usize| (u128::from(bytes) * m as u128 / n.max(1) as u128) as u64;
        let footprint = Footprint {
            method,
            n,
            bytes: &scaled,
            holds,
            alternative,
        };
        self.check_scaled(&footprint, Scaling::Proportional)
    }

    fn check_scaled(&self, footprint: &Footprint<'_>, scaling: Scaling) -> Result<()> {
        let needed = (footprint.bytes)(footprint.n);
        if needed <= self.bytes {
            return Ok(());
        }
        // The largest m < n with bytes(m) <= limit (bytes is non-decreasing).
        let (mut lo, mut hi) = (0usize, footprint.n);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if (footprint.bytes)(mid) <= self.bytes {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Err(Error::OverMemoryLimit(Box::new(MemoryRefusal {
            method: footprint.method.to_string(),
            n: footprint.n,
            needed: ByteSize(needed),
            holds: footprint.holds.clone(),
            limit: ByteSize(self.bytes),
            limit_source: self.source.clone(),
            max_n: lo,
            scaling,
            alternative: footprint.alternative.to_string(),
            raise: self.source.how_to_raise(),
        })))
    }
}

/// Reads a size: a non-negative number of bytes with an optional suffix K, M, G or T
/// (powers of 1024; case-insensitive; `KB`, `KiB`, `B` accepted), e.g. `"4G"`, `"512M"`,
/// `"1.5g"`, `"1000000"`. `name` is the variable or flag it came from, for the error.
///
/// # Errors
/// [`Error::InvalidParameter`] naming `name` when the text is not such a size or is zero.
pub fn parse_size(text: &str, name: &str) -> Result<u64> {
    let bad = |why: &str| {
        Error::invalid(
            name,
            format!("{text:?} {why}; give bytes with an optional suffix K, M, G or T (powers of 1024), e.g. {name}=4G"),
        )
    };
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, suffix) = t.split_at(split);
    let value: f64 = number.parse().map_err(|_| bad("is not a size"))?;
    let shift = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return Err(bad("has an unknown unit")),
    };
    let bytes = value * (1u64 << shift) as f64;
    if !(bytes >= 1.0 && bytes < u64::MAX as f64) {
        return Err(bad("is not a positive size"));
    }
    Ok(bytes as u64)
}

/// `MemAvailable` of a `/proc/meminfo` text, in bytes.
fn mem_available(meminfo: &str) -> Option<u64> {
    meminfo.lines().find_map(|line| {
        let rest = line.strip_prefix("MemAvailable:")?;
        let mut words = rest.split_whitespace();
        let value: u64 = words.next()?.parse().ok()?;
        match words.next() {
            Some("kB") => value.checked_mul(1024),
            None => Some(value),
            Some(_) => None,
        }
    })
}

/// A cgroup limit at or above this is "no limit" (v1 writes `PAGE_COUNTER_MAX` pages).
const NO_LIMIT: u64 = 1 << 60;

/// The smallest room (limit less working set) under the memory limits of the process's
/// cgroups, given `/proc/self/cgroup` and the cgroup mount point; `None` when no limit is
/// set or readable. With its limit file, for the message.
fn cgroup_room(self_cgroup: &str, root: &Path) -> Option<(u64, String)> {
    let read = |p: &Path| std::fs::read_to_string(p).ok();
    let mut best: Option<(u64, String)> = None;
    for line in self_cgroup.lines() {
        let mut parts = line.splitn(3, ':');
        let (id, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        // v2: "0::/path", files memory.max / memory.current / memory.stat (inactive_file).
        // v1: "N:memory:/path" (or "N:memory,other:/path") under root/memory.
        let (base, files) = if id == "0" && controllers.is_empty() {
            (
                root.to_path_buf(),
                ["memory.max", "memory.current", "inactive_file"],
            )
        } else if controllers.split(',').any(|c| c == "memory") {
            (
                root.join("memory"),
                [
                    "memory.limit_in_bytes",
                    "memory.usage_in_bytes",
                    "total_inactive_file",
                ],
            )
        } else {
            continue;
        };
        // The process's own cgroup and each ancestor up to the mount point.
        let mut dir: PathBuf = base.join(path.trim_start_matches('/'));
        loop {
            let limit = read(&dir.join(files[0])).and_then(|t| t.trim().parse::<u64>().ok());
            if let Some(limit) = limit.filter(|&l| l < NO_LIMIT) {
                let usage = read(&dir.join(files[1]))
                    .and_then(|t| t.trim().parse::<u64>().ok())
                    .unwrap_or(0);
                let inactive = read(&dir.join("memory.stat"))
                    .and_then(|t| stat_value(&t, files[2]))
                    .unwrap_or(0);
                let room = limit.saturating_sub(usage.saturating_sub(inactive));
                if best.as_ref().is_none_or(|(b, _)| room < *b) {
                    best = Some((room, dir.join(files[0]).display().to_string()));
                }
            }
            if dir == base || !dir.pop() {
                break;
            }
        }
    }
    best
}

/// The value of `key` in a cgroup `memory.stat` text.
fn stat_value(stat: &str, key: &str) -> Option<u64> {
    stat.lines().find_map(|line| {
        let (k, v) = line.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok())?
    })
}

/// The lower of the two readings, or the assumed memory when there is neither.
fn lowest(meminfo: Option<u64>, cgroup: Option<(u64, String)>) -> MemoryLimit {
    match (meminfo, cgroup) {
        (Some(m), Some((c, path))) if c < m => MemoryLimit {
            bytes: c,
            source: LimitSource::Cgroup(path),
        },
        (Some(m), _) => MemoryLimit {
            bytes: m,
            source: LimitSource::MemAvailable,
        },
        (None, Some((c, path))) => MemoryLimit {
            bytes: c,
            source: LimitSource::Cgroup(path),
        },
        (None, None) => MemoryLimit {
            bytes: ASSUMED_MEMORY,
            source: LimitSource::Assumed,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_suffixes_and_bad_ones_name_the_variable() {
        let p = |t: &str| parse_size(t, MAX_MEMORY_ENV);
        assert_eq!(p("4G").unwrap(), 4 << 30);
        assert_eq!(p("4g").unwrap(), 4 << 30);
        assert_eq!(p(" 512M ").unwrap(), 512 << 20);
        assert_eq!(p("1K").unwrap(), 1024);
        assert_eq!(p("2KiB").unwrap(), 2048);
        assert_eq!(p("1.5G").unwrap(), 3 << 29);
        assert_eq!(p("1T").unwrap(), 1 << 40);
        assert_eq!(p("123456").unwrap(), 123456);
        assert_eq!(p("10B").unwrap(), 10);
        assert!(p("lots").unwrap_err().to_string().contains("is not a size"));
        assert!(p("4X").unwrap_err().to_string().contains("unknown unit"));
        for bad in [
            "",
            "G",
            "four",
            "4X",
            "-1G",
            "0",
            "0.1",
            "1e3",
            "4 GB extra",
        ] {
            let e = p(bad).unwrap_err().to_string();
            assert!(
                e.contains("UNFOLD_MAX_MEMORY") && e.contains("e.g. UNFOLD_MAX_MEMORY=4G"),
                "{bad:?}: {e}"
            );
        }
    }

    /// The process's limit wins over the environment and the machine, and can be cleared.
    /// (The only test here that sets it.)
    #[test]
    fn the_process_limit_takes_precedence_until_cleared() {
        let limit = MemoryLimit::given(12345, "--max-memory");
        MemoryLimit::set_process(Some(limit.clone()));
        assert_eq!(MemoryLimit::from_env_or_machine().unwrap(), limit);
        assert_eq!(MemoryLimit::resolve(None).unwrap(), limit);
        let own = MemoryLimit::given(99, "the fit's own");
        assert_eq!(MemoryLimit::resolve(Some(&own)).unwrap(), own);
        MemoryLimit::set_process(None);
        assert_eq!(MemoryLimit::process(), None);
        assert_ne!(MemoryLimit::from_env_or_machine().ok(), Some(limit));
    }

    #[test]
    fn byte_sizes_read_in_binary_units() {
        assert_eq!(ByteSize(512).to_string(), "512 B");
        assert_eq!(ByteSize(1536).to_string(), "1.5 KiB");
        assert_eq!(ByteSize(1 << 20).to_string(), "1.0 MiB");
        assert_eq!(ByteSize(13 << 30).to_string(), "13.0 GiB");
        assert_eq!(ByteSize(3 << 40).to_string(), "3.0 TiB");
    }

    #[test]
    fn mem_available_is_read_in_bytes() {
        let text = "MemTotal:       24684084 kB\nMemFree:  100 kB\nMemAvailable:   23374380 kB\n";
        assert_eq!(mem_available(text), Some(23374380 * 1024));
        assert_eq!(mem_available("MemTotal: 5 kB\n"), None);
        assert_eq!(mem_available("MemAvailable: lots\n"), None);
    }

    /// A scratch cgroup mount for the readers.
    fn mount(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("unfold-cgroup-{name}-{}", std::process::id()));
        std::fs::remove_dir_all(&dir).ok();
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn write(path: PathBuf, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn cgroup_v2_room_is_the_tightest_ancestor_limit_less_its_working_set() {
        let root = mount("v2");
        let own = root.join("a/b");
        write(own.join("memory.max"), "max\n");
        write(root.join("a/memory.max"), "1073741824\n");
        write(root.join("a/memory.current"), "209715200\n");
        write(
            root.join("a/memory.stat"),
            "anon 1\ninactive_file 104857600\n",
        );
        let (room, path) = cgroup_room("0::/a/b\n", &root).unwrap();
        // 1 GiB - (200 MiB - 100 MiB of reclaimable cache).
        assert_eq!(room, (1 << 30) - (100 << 20));
        assert!(path.ends_with("a/memory.max"), "{path}");
        // No limit anywhere: none.
        assert_eq!(cgroup_room("0::/a/b\n", &root.join("missing")), None);
        std::fs::remove_dir_all(&root).ok();
    }

    #[test]
    fn cgroup_v1_unlimited_is_ignored_and_a_limit_is_used() {
        let root = mount("v1");
        let own = root.join("memory/job");
        write(own.join("memory.limit_in_bytes"), "9223372036854771712\n");
        let line = "4:memory:/job\n3:cpuset:/\n";
        assert_eq!(cgroup_room(line, &root), None);
        write(own.join("memory.limit_in_bytes"), "2147483648\n");
        write(own.join("memory.usage_in_bytes"), "1073741824\n");
        write(own.join("memory.stat"), "cache 5\ntotal_inactive_file 0\n");
        let (room, _) = cgroup_room(line, &root).unwrap();
        assert_eq!(room, 1 << 30);
        std::fs::remove_dir_all(&root).ok();
    }

    #[test]
    fn the_lower_reading_wins_and_nothing_read_is_assumed() {
        let cg = Some((100, "/x/memory.max".to_string()));
        assert_eq!(lowest(Some(200), cg.clone()).bytes, 100);
        assert!(matches!(
            lowest(Some(200), cg.clone()).source,
            LimitSource::Cgroup(_)
        ));
        assert_eq!(
            lowest(Some(50), cg.clone()).source,
            LimitSource::MemAvailable
        );
        assert_eq!(lowest(None, cg).bytes, 100);
        let assumed = lowest(None, None);
        assert_eq!(
            (assumed.bytes, assumed.source.clone()),
            (ASSUMED_MEMORY, LimitSource::Assumed)
        );
        assert!(assumed.source.to_string().contains("could not be read"));
    }

    /// This machine's reading is positive and says where it came from.
    #[test]
    fn the_machine_reading_is_positive() {
        let m = MemoryLimit::machine();
        assert!(m.bytes > 0);
        assert!(matches!(
            m.source,
            LimitSource::MemAvailable | LimitSource::Cgroup(_) | LimitSource::Assumed
        ));
    }

    /// A need known on one n only is scaled in proportion to the points, and the refusal
    /// says that many or more fit.
    #[test]
    fn a_proportional_need_says_how_many_points_fit_at_least() {
        let limit = MemoryLimit::given(1000, "--max-memory");
        assert!(limit
            .check_proportional("MEU", 100, 1000, "a factor".into(), "a smaller k")
            .is_ok());
        // 3000 bytes on 300 points: 10 a point, so 100 points fit the limit exactly.
        let e = limit
            .check_proportional("MEU", 300, 3000, "a factor".into(), "a smaller k")
            .unwrap_err();
        match &e {
            Error::OverMemoryLimit(r) => {
                assert_eq!((r.n, r.max_n, r.needed.0), (300, 100, 3000));
                assert_eq!(r.scaling, Scaling::Proportional);
            }
            other => panic!("{other:?}"),
        }
        let text = e.to_string();
        assert!(
            text.contains("100 points or more fit") && !text.contains("at most"),
            "{text}"
        );
    }

    #[test]
    fn over_the_limit_names_everything_and_the_largest_n_that_fits() {
        let limit = MemoryLimit::given(1 << 20, "--max-memory");
        let bytes = |m: usize| 8 * 13 * (m as u64).pow(2);
        let footprint = |n| Footprint {
            method: "DRILL",
            n,
            bytes: &bytes,
            holds: "13 dense n x n matrices".into(),
            alternative: "meu",
        };
        // 8 * 13 * 100^2 = 1,040,000 <= 1,048,576 < 8 * 13 * 101^2.
        assert!(limit.check(&footprint(100)).is_ok());
        let e = limit.check(&footprint(200)).unwrap_err();
        match &e {
            Error::OverMemoryLimit(r) => {
                assert_eq!((r.n, r.max_n, r.needed.0), (200, 100, 4_160_000));
                assert_eq!(r.scaling, Scaling::Formula);
                assert_eq!(r.limit_source, LimitSource::Given("--max-memory".into()));
            }
            other => panic!("{other:?}"),
        }
        let text = e.to_string();
        for part in [
            "DRILL on 200 points",
            "4.0 MiB",
            "13 dense n x n matrices",
            "1.0 MiB (--max-memory)",
            "at most 100 points",
            "meu",
            "raise --max-memory",
        ] {
            assert!(text.contains(part), "{part:?} missing from {text}");
        }
        // From the environment or the machine, the advice is the variable.
        let env = MemoryLimit {
            bytes: 1 << 20,
            source: LimitSource::Environment,
        };
        let text = env.check(&footprint(200)).unwrap_err().to_string();
        assert!(text.contains("(UNFOLD_MAX_MEMORY)") && text.contains("UNFOLD_MAX_MEMORY=64G"));
    }
}
