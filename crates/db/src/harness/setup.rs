//! What an application run asks of the storage side, as plain data ([`Setup`]: no command-line types), and
//! its checks and claims, all made before anything is: every refusal here is the user's
//! ([`WorkloadError::Setup`], exit 2 in the binary) and names the flag.

use crate::database::url::ServerUrl;
pub use crate::database::DatabaseKind;
use crate::WorkloadError;
use iolab_device::{HeldDir, Output, WriteGate};
use iolab_spec::throttle::ThrottleSpec;

/// The smallest `--memory`: the pages a database needs at hand to run at all (its processes' private
/// memory is apart: the limit moves with it).
pub const MIN_MEMORY: u64 = 16 << 20;

/// A value and the text it was parsed from, for errors that quote what the user typed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Typed<T> {
    /// The value.
    pub value: T,
    /// The text, as typed.
    pub text: String,
}

/// What an application run asks of the storage side, each field a flag of `iolab db`.
#[derive(Clone, Debug)]
pub struct Setup {
    /// `--database`.
    pub database: DatabaseKind,
    /// `--url`: a PostgreSQL server of the user's, parsed ([`ServerUrl::parse`]; shown without its password).
    pub url: Option<ServerUrl>,
    /// `--dir`: the database's directory; `None`: `iolab-db-PID` in `$IOLAB_SCRATCH_DIR` or the current
    /// directory.
    pub dir: Option<String>,
    /// Further directories the workload writes, each with the flag that named it (a copy's `--to`): made,
    /// throttled, captured and removed with the database's.
    pub also: Vec<(&'static str, String)>,
    /// `--shared-buffers` of a private PostgreSQL server, bytes.
    pub shared_buffers_bytes: u64,
    /// `--keep`: leave the directories (the server stopped).
    pub keep: bool,
    /// `--memory`: the budget for the database's pages, bytes, as typed.
    pub memory: Option<Typed<u64>>,
    /// `--throttle`.
    pub throttle: Option<ThrottleSpec>,
    /// `--capture FILE`.
    pub capture: Option<String>,
}

impl Setup {
    /// A setup of `database` in the default directory, nothing else asked.
    pub fn new(database: DatabaseKind) -> Setup {
        Setup {
            database,
            url: None,
            dir: None,
            also: Vec::new(),
            shared_buffers_bytes: 32 << 20,
            keep: false,
            memory: None,
            throttle: None,
            capture: None,
        }
    }

    /// The database directory's path as given, or the default.
    pub fn dir_path(&self) -> String {
        self.dir.clone().unwrap_or_else(|| {
            let base = std::env::var("IOLAB_SCRATCH_DIR").unwrap_or_else(|_| ".".into());
            format!("{}/iolab-db-{}", base.trim_end_matches('/'), std::process::id())
        })
    }

    /// A private PostgreSQL server (not the user's).
    pub(crate) fn private_server(&self) -> bool {
        self.database == DatabaseKind::Postgres && self.url.is_none()
    }

    /// Checks the flags against each other and against the machine (root, controllers, tracefs).
    pub(crate) fn check(&self) -> Result<(), WorkloadError> {
        let setup = |m: &str| Err(WorkloadError::Setup(m.to_string()));
        if self.url.is_some() {
            if self.database != DatabaseKind::Postgres {
                return setup("--url names a PostgreSQL server: add --database postgres");
            }
            if self.dir.is_some() {
                return setup(
                    "--url and --dir exclude each other: a server of your own keeps its files where it keeps them",
                );
            }
            for (flag, what) in [
                (self.memory.is_some(), "--memory holds a server iolab starts; a server of your own (--url) is yours to limit"),
                (self.throttle.is_some(), "--throttle holds the devices under --dir; a server of your own (--url) is yours to throttle"),
                (self.capture.is_some(), "--capture records the devices under --dir; a server of your own (--url) has no devices iolab knows"),
            ] {
                if flag {
                    return setup(what);
                }
            }
        }
        self.check_memory()?;
        self.check_throttle()?;
        if self.capture.is_some() {
            iolab_trace::capture::tracefs().map_err(|e| WorkloadError::Setup(format!("--capture: {e}")))?;
        }
        Ok(())
    }

    fn check_memory(&self) -> Result<(), WorkloadError> {
        let Some(Typed { value: bytes, text }) = &self.memory else { return Ok(()) };
        let postgres = self.database == DatabaseKind::Postgres;
        // PostgreSQL's shared buffers are shared memory, counted with the pages.
        let least = if postgres { self.shared_buffers_bytes + MIN_MEMORY } else { MIN_MEMORY };
        if *bytes < least {
            return Err(WorkloadError::Setup(format!(
                "invalid value '{text}' for '--memory': at least {} {}",
                iolab_device::format_bytes(least),
                if postgres {
                    "of pages: --shared-buffers, which are counted with them, and 16 MiB"
                } else {
                    "of pages"
                }
            )));
        }
        if !nix::unistd::geteuid().is_root() {
            return Err(WorkloadError::Setup(
                "--memory needs root: only root can create a cgroup and set its memory limit\n  hint: run iolab as root, or drop --memory and build a database larger than memory".into(),
            ));
        }
        if iolab_device::memlimit::detect().is_none() {
            return Err(WorkloadError::Setup(iolab_device::memlimit::MemoryError::NoController.to_string()));
        }
        Ok(())
    }

    fn check_throttle(&self) -> Result<(), WorkloadError> {
        if self.throttle.is_none() {
            return Ok(());
        }
        if !nix::unistd::geteuid().is_root() {
            return Err(WorkloadError::Setup(
                "--throttle needs root: only root can create a cgroup and set its I/O limits\n  hint: run iolab as root, or drop --throttle".into(),
            ));
        }
        if iolab_device::throttle::detect().is_none() {
            return Err(WorkloadError::Setup(
                iolab_device::throttle::ThrottleError::NoController.to_string(),
            ));
        }
        Ok(())
    }
}

/// Where window `label`'s trace goes: FILE with `.LABEL` before its extension (`tpcc.iolabtrace` becomes
/// `tpcc.users-4.iolabtrace`; `trace` becomes `trace.users-4`).
pub fn window_capture_path(file: &str, label: &str) -> String {
    let name_at = file.rfind('/').map_or(0, |i| i + 1);
    match file[name_at..].rfind('.').filter(|&dot| dot > 0) {
        Some(dot) => format!("{}.{label}{}", &file[..name_at + dot], &file[name_at + dot..]),
        None => format!("{file}.{label}"),
    }
}

/// The paths a setup claimed in the command's gate: the captures' outputs, one per window, and the
/// directories (the database's, then the others), each with its path as given and held by the gate's claim.
#[derive(Debug)]
pub(crate) struct Claimed {
    pub(crate) captures: Vec<Output>,
    pub(crate) dir: Option<(String, HeldDir)>,
    pub(crate) also: Vec<(String, HeldDir)>,
}

/// The accounts besides iolab's user whose files iolab may remove from its directories: the account a
/// private PostgreSQL server runs as when iolab is root (whether this run starts one or not: a directory an
/// earlier run kept holds that server's files).
fn dir_owners() -> Vec<u32> {
    match crate::database::server::server_account() {
        Ok(Some(a)) => vec![a.uid],
        _ => Vec::new(),
    }
}

/// Claims `--capture` (FILE, or one file per window when `windows` name several) and the directories in
/// `gate`; a refused path or a collision is the user's error.
pub(crate) fn claim(
    setup: &Setup,
    windows: &[String],
    gate: &mut WriteGate,
) -> Result<Claimed, WorkloadError> {
    let gated = |e: iolab_device::GateError| WorkloadError::Setup(e.to_string());
    let mut captures = Vec::new();
    if let Some(file) = setup.capture.as_deref() {
        if windows.is_empty() {
            captures.push(gate.output("--capture", file).map_err(gated)?);
        } else if file == "-" {
            return Err(WorkloadError::Setup(
                "invalid value '-' for '--capture': a sweep over users records one trace per user count, each in a file of its own; give a FILE (FILE.users-N are written)".into(),
            ));
        } else {
            for label in windows {
                captures.push(gate.output("--capture", &window_capture_path(file, label)).map_err(gated)?);
            }
        }
    }
    let owners = dir_owners();
    let dir = match setup.url {
        None => {
            let path = setup.dir_path();
            Some((path.clone(), gate.database_dir("--dir", &path, &owners).map_err(gated)?))
        }
        Some(_) => None,
    };
    let mut also = Vec::new();
    for (flag, path) in &setup.also {
        also.push((path.clone(), gate.database_dir(flag, path, &owners).map_err(gated)?));
    }
    Ok(Claimed { captures, dir, also })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_s_capture_path_puts_its_label_before_the_extension() {
        assert_eq!(window_capture_path("tpcc.iolabtrace", "users-4"), "tpcc.users-4.iolabtrace");
        assert_eq!(window_capture_path("/tmp/a.b/trace", "users-16"), "/tmp/a.b/trace.users-16");
        assert_eq!(window_capture_path("dir/.hidden", "users-1"), "dir/.hidden.users-1");
        assert_eq!(window_capture_path("t.tar.gz", "users-2"), "t.tar.users-2.gz");
    }

    #[test]
    fn a_sweep_claims_one_capture_per_window_and_refuses_stdout() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.iolabtrace").display().to_string();
        let mut setup = Setup::new(DatabaseKind::Sqlite);
        setup.dir = Some(dir.path().join("db").display().to_string());
        setup.capture = Some(file.clone());
        let windows = ["users-1".to_string(), "users-2".to_string()];
        let c = claim(&setup, &windows, &mut WriteGate::new()).unwrap();
        let paths: Vec<&str> = c.captures.iter().map(Output::path).collect();
        assert!(paths[0].ends_with("t.users-1.iolabtrace") && paths[1].ends_with("t.users-2.iolabtrace"));
        assert_eq!(claim(&setup, &[], &mut WriteGate::new()).unwrap().captures.len(), 1);
        setup.capture = Some("-".into());
        let e = claim(&setup, &windows, &mut WriteGate::new()).unwrap_err();
        assert!(e.to_string().contains("invalid value '-' for '--capture'"), "{e}");
        // Each window's file is gated as the one file is: one that is the --json output collides.
        setup.capture = Some(file.clone());
        let mut gate = WriteGate::new();
        gate.output("--json", &window_capture_path(&file, "users-2")).unwrap();
        assert!(claim(&setup, &windows, &mut gate).is_err());
    }

    #[test]
    fn url_excludes_what_needs_the_files_and_names_the_flag() {
        let mut s = Setup::new(DatabaseKind::Sqlite);
        s.url = Some(ServerUrl::parse("postgres://u@h/db").unwrap());
        assert!(s.check().unwrap_err().to_string().contains("add --database postgres"));
        s.database = DatabaseKind::Postgres;
        s.memory = Some(Typed { value: 1 << 30, text: "1G".into() });
        assert!(s.check().unwrap_err().to_string().starts_with("--memory holds a server iolab starts"));
        assert_eq!(DatabaseKind::parse("postgresql").unwrap(), DatabaseKind::Postgres);
        let e = DatabaseKind::parse("mysql").unwrap_err().to_string();
        assert_eq!(e, "invalid value 'mysql' for '--database': expected sqlite or postgres");
    }
}
