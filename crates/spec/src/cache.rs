//! The block cache a run puts in front of its targets: `--cache SIZE|PCT%` and the `cache_*` keys.

use serde::{Deserialize, Serialize};

/// How much to cache.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheSize {
    /// Bytes.
    Bytes(u64),
    /// A percentage of the cached targets' total size (0-100).
    Percent(f64),
}

/// What happens to writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CacheMode {
    /// Writes go to the target and, once it acknowledges them, into the cache (write-allocate): the seeds'
    /// "read-write-through".
    #[default]
    WriteThrough,
    /// Writes go to the target and update lines already cached; they never allocate (Open CAS "write-around").
    WriteAround,
    /// Writes complete in the cache and are written to the target later (on eviction, above the dirty limit,
    /// on demand and at exit).
    WriteBack,
    /// Only reads are cached; a write invalidates the lines it touches (Open CAS "write-invalidate").
    ReadOnly,
}

/// Which line to evict.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CachePolicy {
    /// Least recently used.
    #[default]
    Lru,
    /// Adaptive Replacement Cache (Megiddo and Modha, FAST 2003).
    Arc,
    /// S3-FIFO as the paper and libCacheSim define it (Yang et al., SOSP 2023): 2-bit frequencies, a key
    /// moves from the small FIFO to the main one after two hits.
    S3Fifo,
    /// S3-FIFO with a 1-bit frequency (one hit moves a key to the main FIFO), its author's advice for block
    /// I/O; iolab's `s3-fifo` before it followed the paper.
    S3Fifo1Bit,
}

impl CacheMode {
    /// The name users type (`write-through`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            CacheMode::WriteThrough => "write-through",
            CacheMode::WriteAround => "write-around",
            CacheMode::WriteBack => "write-back",
            CacheMode::ReadOnly => "read-only",
        }
    }
}

impl CachePolicy {
    /// The name users type (`lru`, `arc`, `s3-fifo`, `s3-fifo-1bit`).
    pub fn as_str(self) -> &'static str {
        match self {
            CachePolicy::Lru => "lru",
            CachePolicy::Arc => "arc",
            CachePolicy::S3Fifo => "s3-fifo",
            CachePolicy::S3Fifo1Bit => "s3-fifo-1bit",
        }
    }
}

/// Default cache line.
pub const DEFAULT_CACHE_LINE: u64 = 4096;

/// The cache as a job asked for it (every key optional; `size` absent or 0 means no cache).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CacheSpec {
    /// `cache`: size in bytes or percent of the cached targets.
    pub size: Option<CacheSize>,
    /// `cache_dev`: where the cache store lives: `mem:SIZE` (RAM, the default), an emulated device
    /// (`sim:ssd`: data in RAM, hits timed by the device's model), or, with real targets only, a file or block
    /// device that carries a flash cache's I/O for real (data in RAM too; docs/CACHE.md).
    pub dev: Option<crate::target::TargetSpec>,
    /// `cache_line`: bytes per line (default 4 KiB).
    pub line_bytes: Option<u64>,
    /// `cache_mode`.
    pub mode: Option<CacheMode>,
    /// `cache_policy`.
    pub policy: Option<CachePolicy>,
    /// `cache_admit`: admit a line on its n-th miss (1 = at once, the default).
    pub admit_after: Option<u32>,
    /// `cache_seq_cutoff`: bypass the cache for a sequential stream once it has run this many bytes
    /// (bcache's `sequential_cutoff`; 0 = never bypass, the default).
    pub seq_cutoff_bytes: Option<u64>,
    /// `cache_max_mem`: cap on the RAM the cache may use (IntelliMemory's cap).
    pub max_mem_bytes: Option<u64>,
    /// `cache_shrink`: give memory back when the machine's MemAvailable runs low.
    pub shrink: Option<bool>,
    /// `cache_dirty_max`: percent of lines that may be dirty before write-backs start (default 50).
    pub dirty_max_pct: Option<f64>,
}

impl CacheSpec {
    /// Lets every key set in `cli` win over this one.
    pub fn apply_overrides(&mut self, cli: &CacheSpec) {
        macro_rules! over {
            ($($f:ident),*) => { $( if cli.$f.is_some() { self.$f = cli.$f.clone(); } )* };
        }
        over!(
            size,
            dev,
            line_bytes,
            mode,
            policy,
            admit_after,
            seq_cutoff_bytes,
            max_mem_bytes,
            shrink,
            dirty_max_pct
        );
    }

    /// True when the job asked for a cache of non-zero size.
    pub fn enabled(&self) -> bool {
        match self.size {
            Some(CacheSize::Bytes(b)) => b > 0,
            Some(CacheSize::Percent(p)) => p > 0.0,
            None => false,
        }
    }
}
