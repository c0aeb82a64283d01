//! Consent: what the user allowed iolab to destroy, typed on the command line and nowhere else.
//!
//! A job file, a profile, an imported fio or Iometer file and the environment describe a workload; none of
//! them can grant the right to write a block device, to destroy what a device or file holds, or to write a
//! file iolab did not make. Such a key in a job file is refused, naming the flag to type
//! ([`Consent::refuse`]); [`crate::JobSpec::consent`] is never read from a file and never serialised.

use crate::error::{Place, SpecError};

/// Who named a path a run writes (`trace`, `journal`): consent to replace what is there comes only from the
/// command line, as for targets. A path a job file, a profile or an import names may only create a new
/// regular file; `iolab-device`'s `WriteGate::output_named` and `WriteGate::journal` enforce it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NamedBy {
    /// Typed on the command line (`--trace FILE`, `--journal FILE`): it may replace a file there.
    CommandLine,
    /// A job file, a profile, an import, or anything else not typed: it may only create a new file. The
    /// default, so that a path whose origin is not known gets no consent.
    #[default]
    JobFile,
}

/// The consent flags of one command line. All false unless typed. Their keys
/// ([`crate::job::CONSENT_KEYS`]) are defined with the others ([`crate::job::keys`]), as command-line keys
/// that a job file, a profile, an import or a sweep may not set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Consent {
    /// `--allow-write-device`: a write job may write a block device (one that holds no signature and is
    /// not in use).
    pub allow_write_device: bool,
    /// `--destroy-data`: also a device or file that carries a filesystem, volume, partition table or
    /// database signature. Never one in use (mounted, swap, held open, locked or mapped).
    pub destroy_data: bool,
    /// `--overwrite`: a write job may write an existing file that iolab did not make.
    pub overwrite: bool,
}

impl Consent {
    /// Either's consent (a flag typed on either command line).
    pub fn or(self, other: Consent) -> Consent {
        Consent {
            allow_write_device: self.allow_write_device || other.allow_write_device,
            destroy_data: self.destroy_data || other.destroy_data,
            overwrite: self.overwrite || other.overwrite,
        }
    }

    /// `--overwrite`, or `--destroy-data`, which allows more.
    pub fn overwrites(self) -> bool {
        self.overwrite || self.destroy_data
    }

    /// The flag that grants consent `key` (`allow_write_device` → `--allow-write-device`).
    pub fn flag(key: &str) -> String {
        format!("--{}", key.replace('_', "-"))
    }

    /// The refusal of a consent key read from a job file (or any place but the command line).
    pub fn refuse(key: &str, place: &Place) -> SpecError {
        SpecError::Conflict {
            place: place.clone(),
            message: format!(
                "consent to destroy data is never read from a job file, a profile, an import or a sweep; type {} on the command line if you mean it",
                Consent::flag(key)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_consent_key_in_a_job_file_is_refused_naming_the_flag() {
        let place =
            Place::Key { file: "vendor.toml".into(), table: String::new(), key: "destroy_data".into() };
        let e = Consent::refuse("destroy_data", &place).to_string();
        assert!(e.contains("'destroy_data' in job file 'vendor.toml'"), "{e}");
        assert!(e.contains("type --destroy-data on the command line"), "{e}");
    }

    #[test]
    fn destroy_data_implies_overwrite() {
        assert!(Consent { destroy_data: true, ..Consent::default() }.overwrites());
        assert!(!Consent::default().overwrites());
    }
}
