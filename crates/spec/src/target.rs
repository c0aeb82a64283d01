//! Target strings: where the bytes of a run live.
//!
//! A target is named by one string, the same on the command line, in a job file and in the result JSON:
//! a path (a regular file or a block device), `mem:SIZE` (an in-process RAM disk with 512-byte sectors),
//! `null:SIZE` (completes at once, copies nothing: iolab's own overhead), or `sim:MODEL,key=value,...`
//! (an emulated device; `sim:fixed` is a fixed-latency device with a known capacity, used by tests and
//! what-if runs). Parsing is pure: whether a path exists is the target crate's business.

use crate::error::{Place, SpecError};
use crate::sim::{ArrayParams, HddParams, LinkParams, SsdParams};
use crate::units::{parse_duration_ns, parse_size};
use serde::{Deserialize, Serialize};

/// One target as the user named it, parsed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TargetSpec {
    /// A regular file or a block device, by path.
    Path {
        /// The path as typed.
        path: String,
    },
    /// An in-process RAM disk of `size_bytes`.
    Mem {
        /// Capacity in bytes.
        size_bytes: u64,
    },
    /// A target that completes every I/O at once without copying.
    Null {
        /// Capacity in bytes (offsets are generated within it).
        size_bytes: u64,
    },
    /// An emulated device.
    Sim(SimSpec),
    /// A storage link (`link:PRESET,...:TARGET`) in front of another target.
    Link {
        /// The link's parameters.
        link: LinkParams,
        /// The target behind the link.
        target: Box<TargetSpec>,
    },
    /// A reference (`@db`) to a target declared in the job's `[targets]` table; the plan replaces it with the
    /// declared target before anything else sees it.
    Named {
        /// The name in `[targets]`.
        name: String,
    },
}

/// An emulated device model and its parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case")]
pub enum SimSpec {
    /// A device that serves every I/O in exactly `latency_ns`, with `servers` I/Os in service at once and
    /// further I/Os queued FIFO inside the device. Capacity is `servers / latency` IOPS.
    Fixed {
        /// Service time of one I/O.
        latency_ns: u64,
        /// I/Os the device serves in parallel.
        servers: u32,
        /// Capacity in bytes.
        size_bytes: u64,
    },
    /// A rotating disk (`sim:hdd`).
    Hdd(HddParams),
    /// A flash device (`sim:ssd`).
    Ssd(SsdParams),
    /// A RAID array of disks behind a controller (`sim:array`).
    Array(ArrayParams),
}

impl SimSpec {
    /// Capacity in bytes.
    pub fn size_bytes(&self) -> u64 {
        match self {
            SimSpec::Fixed { size_bytes, .. } => *size_bytes,
            SimSpec::Hdd(p) => p.size_bytes,
            SimSpec::Ssd(p) => p.size_bytes,
            SimSpec::Array(p) => p.size_bytes,
        }
    }
}

/// Default capacity of `mem:`, `null:` and `sim:` targets when no size is given.
pub const DEFAULT_VIRTUAL_SIZE: u64 = 1 << 30;

impl TargetSpec {
    /// Parses what a named target (`[targets]`, `--target NAME=TARGET`) stands for: a path, `mem:`, `null:`
    /// or `sim:` target, never another name (`@NAME`). Errors name `place` and quote `text`.
    pub(crate) fn parse_named(text: &str, place: &Place) -> Result<TargetSpec, SpecError> {
        match TargetSpec::parse(text).map_err(|e| SpecError::invalid(place, text, e))? {
            TargetSpec::Named { .. } => {
                Err(SpecError::invalid(place, text, "a path, mem:, null: or sim: target"))
            }
            t => Ok(t),
        }
    }

    /// Parses a target string. `Err` carries what was expected (the caller adds the flag or key).
    pub fn parse(s: &str) -> Result<TargetSpec, String> {
        let t = s.trim();
        if t.is_empty() {
            return Err(
                "a path, 'mem:SIZE', 'null:SIZE' or 'sim:fixed,latency=DUR,servers=N,size=SIZE'".into()
            );
        }
        if let Some(rest) = t.strip_prefix("mem:") {
            return Ok(TargetSpec::Mem { size_bytes: virtual_size(rest, "mem")? });
        }
        if let Some(rest) = t.strip_prefix("null:") {
            return Ok(TargetSpec::Null { size_bytes: virtual_size(rest, "null")? });
        }
        if t == "mem" || t == "null" {
            return Ok(if t == "mem" {
                TargetSpec::Mem { size_bytes: DEFAULT_VIRTUAL_SIZE }
            } else {
                TargetSpec::Null { size_bytes: DEFAULT_VIRTUAL_SIZE }
            });
        }
        if let Some(rest) = t.strip_prefix("sim:") {
            return parse_sim(rest).map(TargetSpec::Sim);
        }
        if let Some(rest) = t.strip_prefix("link:") {
            let (link, inner) = crate::sim::parse_link(rest)?;
            // One link per target: the run emulates only the outermost one, and a chain of them would
            // recurse here once per 'link:' (a long one overflows the stack).
            if inner.trim_start().starts_with("link:") {
                return Err(format!(
                    "a path, 'mem:', 'null:' or 'sim:' target behind 'link:', not another link ('{inner}'); \
                     one link per target"
                ));
            }
            let target = TargetSpec::parse(inner)?;
            if matches!(target, TargetSpec::Named { .. }) {
                return Err(format!(
                    "a target behind 'link:', not a name ('{inner}'); put the link in [targets]"
                ));
            }
            return Ok(TargetSpec::Link { link, target: Box::new(target) });
        }
        if let Some(name) = t.strip_prefix('@') {
            if !is_target_name(name) {
                return Err(format!(
                    "'@NAME' naming a target in [targets] (letters, digits, '_' or '-'), found '{t}'"
                ));
            }
            return Ok(TargetSpec::Named { name: name.to_string() });
        }
        Ok(TargetSpec::Path { path: s.to_string() })
    }

    /// The name used in reports: the path, or the canonical form of a virtual target.
    pub fn display_name(&self) -> String {
        match self {
            TargetSpec::Path { path } => path.clone(),
            TargetSpec::Mem { size_bytes } => format!("mem:{}", crate::units::format_size(*size_bytes)),
            TargetSpec::Null { size_bytes } => format!("null:{}", crate::units::format_size(*size_bytes)),
            TargetSpec::Sim(SimSpec::Fixed { latency_ns, servers, size_bytes }) => format!(
                "sim:fixed,latency={},servers={},size={}",
                crate::units::format_duration(*latency_ns),
                servers,
                crate::units::format_size(*size_bytes)
            ),
            TargetSpec::Sim(SimSpec::Hdd(p)) => p.display_name(),
            TargetSpec::Sim(SimSpec::Ssd(p)) => p.display_name(),
            TargetSpec::Sim(SimSpec::Array(a)) => a.display_name(),
            TargetSpec::Link { link, target } => {
                format!("{}:{}", link.display_prefix(), target.display_name())
            }
            TargetSpec::Named { name } => format!("@{name}"),
        }
    }

    /// The target that holds the bytes: this one, or the one behind a `link:`.
    pub fn base(&self) -> &TargetSpec {
        match self {
            TargetSpec::Link { target, .. } => target.base(),
            t => t,
        }
    }

    /// True for targets that live inside the iolab process (no file descriptor).
    pub fn is_virtual(&self) -> bool {
        !matches!(self.base(), TargetSpec::Path { .. })
    }
}

/// True for names usable in `[targets]` and `--target NAME=TARGET`: a letter, then letters, digits, '_' or '-'.
pub fn is_target_name(s: &str) -> bool {
    let mut c = s.chars();
    c.next().is_some_and(|f| f.is_ascii_alphabetic())
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_' || x == '-')
        && s.len() <= 64
}

fn virtual_size(rest: &str, kind: &str) -> Result<u64, String> {
    let size = parse_size(rest).map_err(|e| format!("'{kind}:SIZE' where SIZE is {e}"))?;
    if size == 0 || size % 512 != 0 {
        return Err(format!("'{kind}:SIZE' with SIZE a positive multiple of 512 bytes"));
    }
    Ok(size)
}

fn parse_sim(rest: &str) -> Result<SimSpec, String> {
    let mut parts = rest.split(',');
    let model = parts.next().unwrap_or("");
    match model {
        "fixed" => {
            let mut latency_ns = 100_000;
            let mut servers = 1u32;
            let mut size_bytes = DEFAULT_VIRTUAL_SIZE;
            for kv in parts {
                let (k, v) = kv.split_once('=').ok_or_else(|| {
                    format!("'key=value' in 'sim:fixed,...' but found '{kv}' (keys: latency, servers, size)")
                })?;
                match k {
                    "latency" | "lat" => {
                        latency_ns = parse_duration_ns(v).map_err(|e| format!("latency={v}: {e}"))?;
                        if latency_ns == 0 {
                            return Err("latency > 0 in 'sim:fixed'".into());
                        }
                    }
                    "servers" => {
                        servers = v
                            .parse::<u32>()
                            .ok()
                            .filter(|n| (1..=65536).contains(n))
                            .ok_or_else(|| format!("servers=N with N in 1..=65536, found '{v}'"))?
                    }
                    "size" => size_bytes = virtual_size(v, "size")?,
                    other => {
                        return Err(format!(
                            "one of the keys latency, servers, size in 'sim:fixed', found '{other}'"
                        ))
                    }
                }
            }
            Ok(SimSpec::Fixed { latency_ns, servers, size_bytes })
        }
        "hdd" => crate::sim::parse_hdd(parts).map(SimSpec::Hdd),
        "ssd" => crate::sim::parse_ssd(parts).map(SimSpec::Ssd),
        "array" => crate::sim::parse_array(parts).map(SimSpec::Array),
        other => Err(format!(
            "a known emulated device model ('fixed', 'hdd', 'ssd' or 'array'), found 'sim:{other}'"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_mem_with_size_parses() {
        assert_eq!(TargetSpec::parse("mem:4G").unwrap(), TargetSpec::Mem { size_bytes: 4 << 30 });
    }

    #[test]
    fn target_plain_path_is_path() {
        assert_eq!(
            TargetSpec::parse("/dev/nvme0n1").unwrap(),
            TargetSpec::Path { path: "/dev/nvme0n1".into() }
        );
    }

    #[test]
    fn target_sim_fixed_parses_all_keys() {
        let t = TargetSpec::parse("sim:fixed,latency=250us,servers=4,size=64M").unwrap();
        assert_eq!(
            t,
            TargetSpec::Sim(SimSpec::Fixed { latency_ns: 250_000, servers: 4, size_bytes: 64 << 20 })
        );
        assert_eq!(t.display_name(), "sim:fixed,latency=250us,servers=4,size=64M");
    }

    #[test]
    fn target_mem_bad_size_is_error() {
        assert!(TargetSpec::parse("mem:4q").is_err());
        assert!(TargetSpec::parse("mem:0").is_err());
        assert!(TargetSpec::parse("sim:tape").is_err());
        assert!(TargetSpec::parse("sim:fixed,servers=0").is_err());
    }

    #[test]
    fn target_emulated_devices_and_links_parse() {
        assert!(matches!(TargetSpec::parse("sim:hdd,15k").unwrap(), TargetSpec::Sim(SimSpec::Hdd(_))));
        assert!(matches!(TargetSpec::parse("sim:ssd,sata").unwrap(), TargetSpec::Sim(SimSpec::Ssd(_))));
        assert!(matches!(TargetSpec::parse("sim:array").unwrap(), TargetSpec::Sim(SimSpec::Array(_))));
        let t = TargetSpec::parse("link:fc8g:/dev/sdb").unwrap();
        assert_eq!(t.base(), &TargetSpec::Path { path: "/dev/sdb".into() });
        assert_eq!(t.display_name(), "link:fc8g:/dev/sdb");
        assert!(TargetSpec::parse("link:fc8g:@db").is_err());
    }
}
