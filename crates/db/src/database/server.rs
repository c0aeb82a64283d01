//! A private PostgreSQL server: iolab's own, for one command, in the database's directory, reachable only
//! through a Unix socket there, and gone afterwards.
//!
//! [`Server::start`] runs `initdb` into `DIR/pgdata` (trust authentication: only the socket, in a directory
//! of mode 0700, reaches it), then the server itself (`postgres -D DIR/pgdata`) as a child of iolab with
//! `listen_addresses=''` (no TCP), its socket in DIR, small shared buffers unless told, `fsync`,
//! `synchronous_commit` and `full_page_writes` on, and its log in `DIR/postgres.log`. It waits until the
//! server accepts connections. The server is started directly rather than through `pg_ctl start`, so that
//! it stays iolab's child: in its own process group (a Ctrl-C on the terminal reaches iolab, which stops
//! the workload first and the server after), and with a parent-death signal (SIGQUIT, PostgreSQL's
//! immediate shutdown), so even a `kill -9` of iolab leaves no server running. [`Server::stop`] is
//! `pg_ctl stop -m fast`'s signal (SIGINT), then `-m immediate`'s (SIGQUIT) after [`FAST_STOP_S`], then
//! SIGKILL; it runs on drop, and [`cleanup_on_exit`] does the immediate stop for an exit that skips
//! destructors.
//!
//! PostgreSQL refuses to run as root. When iolab is root, `initdb` and the server run as the unprivileged
//! `postgres` account (the distribution's packages make it), the directory is given to it, and the
//! result says so; every directory above must let that account through, which is checked first.
//!
//! [`Server::start_in`] also puts the server in a cgroup (`--memory`): between its fork and its exec the
//! server writes `0` to the cgroup's `cgroup.procs`, through a descriptor iolab opened (so the kernel checks
//! iolab's rights, not the server account's), and every process it starts afterwards is in the cgroup from
//! its first page. [`Server::base_backup`] copies the running server's data directory with `pg_basebackup`
//! over the socket (`iolab db copy`).

use crate::WorkloadError;
use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The port in the socket's name (`.s.PGSQL.5432`); no TCP port is opened.
pub const PORT: u16 = 5432;

/// The superuser `initdb` makes, and the user iolab connects as.
pub const USER: &str = "iolab";

/// The account a server runs as when iolab is root.
pub const ACCOUNT: &str = "postgres";

/// Seconds a fast shutdown may take before the server is stopped immediately.
pub const FAST_STOP_S: u64 = 20;

/// Seconds the server has to accept connections after it was started.
const READY_TIMEOUT_S: u64 = 60;

/// The longest Unix socket path (`sun_path` less its terminating zero).
const SOCKET_PATH_MAX: usize = 107;

/// Servers running now, by process id, for [`cleanup_on_exit`].
static LIVE: Mutex<Vec<i32>> = Mutex::new(Vec::new());

fn live() -> std::sync::MutexGuard<'static, Vec<i32>> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// What the server is told.
#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// `shared_buffers`, in bytes.
    pub shared_buffers_bytes: u64,
    /// `max_connections`.
    pub max_connections: u32,
}

/// An account a server runs as.
#[derive(Clone, Debug)]
pub struct Account {
    /// Its name.
    pub name: String,
    /// Its uid.
    pub uid: u32,
    /// Its primary gid.
    pub gid: u32,
}

/// A running private server.
#[derive(Debug)]
pub struct Server {
    child: Option<Child>,
    dir: PathBuf,
    log: PathBuf,
    account: Option<Account>,
}

/// The directory of PostgreSQL's server programs: `$IOLAB_PG_BINDIR`, `pg_config --bindir`, the newest
/// `/usr/lib/postgresql/*/bin` (Debian and Ubuntu), or the directory of `initdb` on the PATH.
pub fn find_bindir() -> Result<PathBuf, WorkloadError> {
    let has_server = |d: &Path| d.join("initdb").is_file() && d.join("postgres").is_file();
    if let Some(d) = std::env::var_os("IOLAB_PG_BINDIR").map(PathBuf::from) {
        return if has_server(&d) {
            Ok(d)
        } else {
            Err(WorkloadError::Setup(format!("IOLAB_PG_BINDIR '{}' has no initdb and postgres", d.display())))
        };
    }
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output() {
        let d = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if out.status.success() && has_server(&d) {
            return Ok(d);
        }
    }
    let mut versions: Vec<(u32, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .filter(|(_, d)| has_server(d))
        .collect();
    versions.sort();
    if let Some((_, d)) = versions.pop() {
        return Ok(d);
    }
    for d in std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()) {
        if has_server(&d) {
            return Ok(d);
        }
    }
    Err(WorkloadError::Setup(
        "PostgreSQL's server programs (initdb, postgres) were not found (pg_config --bindir, /usr/lib/postgresql/*/bin, PATH)\n  \
         hint: install them (Debian and Ubuntu: apt-get install postgresql), set IOLAB_PG_BINDIR, or give a server of your own with --url"
            .into(),
    ))
}

/// The account to run a server as: none when iolab is not root (it runs as iolab's user), else
/// [`ACCOUNT`], which must exist and must not be root.
pub fn server_account() -> Result<Option<Account>, WorkloadError> {
    if !nix::unistd::geteuid().is_root() {
        return Ok(None);
    }
    match nix::unistd::User::from_name(ACCOUNT) {
        Ok(Some(u)) if !u.uid.is_root() => {
            Ok(Some(Account { name: u.name, uid: u.uid.as_raw(), gid: u.gid.as_raw() }))
        }
        _ => Err(WorkloadError::Setup(format!(
            "PostgreSQL refuses to run as root, and there is no unprivileged '{ACCOUNT}' account to run it as\n  \
             hint: create one (useradd --system {ACCOUNT}; the distribution's postgresql package does), or run iolab as an unprivileged user"
        ))),
    }
}

/// Checks that `account` can reach `dir`: every directory above it lets the account through (search
/// permission, by owner, group or others; ACLs are not read).
fn check_reachable(dir: &Path, account: &Account) -> Result<(), WorkloadError> {
    use std::os::unix::fs::MetadataExt;
    let absolute =
        fs::canonicalize(dir).map_err(|e| WorkloadError::io(format!("resolving '{}'", dir.display()), e))?;
    for up in absolute.ancestors().skip(1) {
        let Ok(m) = fs::metadata(up) else { continue };
        let mode = m.permissions().mode();
        let through = if m.uid() == account.uid {
            mode & 0o100 != 0
        } else if m.gid() == account.gid {
            mode & 0o010 != 0
        } else {
            mode & 0o001 != 0
        };
        if !through {
            return Err(WorkloadError::Setup(format!(
                "the PostgreSQL server would run as '{}' (PostgreSQL refuses root), which cannot reach '{}': '{}' (mode {:o}, owner uid {}) does not let it through\n  \
                 hint: chmod o+x '{}', or put the database elsewhere with --dir",
                account.name,
                dir.display(),
                up.display(),
                mode & 0o7777,
                m.uid(),
                up.display()
            )));
        }
    }
    Ok(())
}

/// The last `lines` lines of the file at `path` (at most 64 KiB read), for an error message.
pub fn tail(path: &Path, lines: usize) -> String {
    let Ok(mut f) = fs::File::open(path) else { return String::new() };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(64 << 10)));
    let mut text = String::new();
    let _ = f.read_to_string(&mut text);
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// A command for one of PostgreSQL's programs, as `account` when there is one, in `dir`.
fn program(bindir: &Path, name: &str, dir: &Path, account: Option<&Account>) -> Command {
    let mut c = Command::new(bindir.join(name));
    c.current_dir(dir).env("LC_ALL", "C").env_remove("PGDATA").env_remove("PGHOST");
    if let Some(a) = account {
        c.uid(a.uid).gid(a.gid).env("HOME", dir).env("USER", &a.name).env("LOGNAME", &a.name);
    }
    c
}

/// `dir` made absolute, checked to hold the server's socket path, given to the server's account and
/// closed to others.
fn prepare_dir(dir: &Path, account: Option<&Account>) -> Result<PathBuf, WorkloadError> {
    let dir =
        std::path::absolute(dir).map_err(|e| WorkloadError::io("resolving the database directory", e))?;
    let socket = dir.join(format!(".s.PGSQL.{PORT}"));
    if socket.as_os_str().len() > SOCKET_PATH_MAX {
        return Err(WorkloadError::Setup(format!(
            "the server's socket '{}' would be {} bytes long; Unix sockets allow {SOCKET_PATH_MAX}\n  hint: give a shorter --dir",
            socket.display(),
            socket.as_os_str().len()
        )));
    }
    if let Some(a) = account {
        check_reachable(&dir, a)?;
        std::os::unix::fs::chown(&dir, Some(a.uid), Some(a.gid)).map_err(|e| {
            WorkloadError::io(format!("giving '{}' to the '{}' account", dir.display(), a.name), e)
        })?;
    }
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o700))
        .map_err(|e| WorkloadError::io(format!("setting the mode of '{}'", dir.display()), e))?;
    Ok(dir)
}

/// Runs initdb for data directory `data`.
fn initdb(bindir: &Path, dir: &Path, data: &Path, account: Option<&Account>) -> Result<(), WorkloadError> {
    let out = program(bindir, "initdb", dir, account)
        .arg("-D")
        .arg(data)
        .args(["-U", USER, "--auth=trust", "--no-locale", "-E", "UTF8", "--no-sync"])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| WorkloadError::io(format!("running {}", bindir.join("initdb").display()), e))?;
    if !out.status.success() {
        return Err(WorkloadError::Setup(format!(
            "initdb failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    Ok(())
}

/// The postgres command for data directory `data`: iolab's settings, output into `log`, its own process
/// group.
fn server_command(
    bindir: &Path,
    dir: &Path,
    data: &Path,
    log: &Path,
    options: &ServerOptions,
    account: Option<&Account>,
) -> Result<Command, WorkloadError> {
    let log_file =
        fs::File::create(log).map_err(|e| WorkloadError::io(format!("creating '{}'", log.display()), e))?;
    let log_err =
        log_file.try_clone().map_err(|e| WorkloadError::io("duplicating the log's descriptor", e))?;
    let mut cmd = program(bindir, "postgres", dir, account);
    cmd.arg("-D").arg(data);
    let socket_dir = dir.display().to_string();
    let settings = [
        ("listen_addresses", String::new()),
        ("unix_socket_directories", socket_dir),
        ("unix_socket_permissions", "0700".into()),
        ("port", PORT.to_string()),
        ("shared_buffers", format!("{}kB", (options.shared_buffers_bytes / 1024).max(128))),
        ("max_connections", options.max_connections.to_string()),
        ("fsync", "on".into()),
        ("synchronous_commit", "on".into()),
        ("full_page_writes", "on".into()),
        ("huge_pages", "off".into()),
        ("logging_collector", "off".into()),
    ];
    for (k, v) in settings {
        cmd.arg("-c").arg(format!("{k}={v}"));
    }
    cmd.stdin(Stdio::null()).stdout(log_file).stderr(log_err).process_group(0);
    Ok(cmd)
}

/// The process group of the process whose `/proc` directory is `proc_dir`: the field after the state in
/// `stat` (`pid (comm) state ppid pgrp ...`), read after the last `)` (a command name may hold one).
fn process_group(proc_dir: &Path) -> Option<u32> {
    let stat = fs::read_to_string(proc_dir.join("stat")).ok()?;
    stat.rsplit_once(')')?.1.split_whitespace().nth(2)?.parse().ok()
}

/// Makes `cmd`'s child join the cgroup open as `cgroup_fd` (when given) and die with iolab.
fn join_on_exec(cmd: &mut Command, cgroup_fd: Option<std::os::fd::RawFd>) {
    let parent = std::process::id() as i32;
    // SAFETY: the closure runs in the forked child before exec and calls only async-signal-safe
    // functions (write, prctl, getppid, _exit) on no shared state; `cgroup_fd` stays open in the parent
    // (the caller keeps it until after the spawn), so the child's copy of it is valid.
    unsafe {
        cmd.pre_exec(move || {
            if let Some(fd) = cgroup_fd {
                // "0" is the writing process: the server joins the cgroup before it runs.
                if libc::write(fd, b"0".as_ptr().cast(), 1) != 1 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            // After std's setuid (which clears a parent-death signal), so it holds for the server.
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGQUIT) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // iolab may have died between the fork and the prctl: then nobody would stop the server.
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

impl Server {
    /// Makes and starts a server in `dir` (an empty directory iolab made; see the module documentation).
    /// A raised `stop` while waiting for it stops it and returns [`WorkloadError::Interrupted`].
    pub fn start(dir: &Path, options: &ServerOptions, stop: &AtomicBool) -> Result<Server, WorkloadError> {
        Server::start_in(dir, options, stop, None)
    }

    /// [`Server::start`], the server (and every process it starts) in the cgroup whose `cgroup.procs` is
    /// `cgroup_procs`, when given.
    pub fn start_in(
        dir: &Path,
        options: &ServerOptions,
        stop: &AtomicBool,
        cgroup_procs: Option<&Path>,
    ) -> Result<Server, WorkloadError> {
        Server::launch(dir, options, stop, cgroup_procs, true)
    }

    /// Starts a server on the data a kept directory holds (`--keep`): no initdb; the server's own crash
    /// recovery replays its WAL before it accepts connections.
    pub fn start_existing(
        dir: &Path,
        options: &ServerOptions,
        stop: &AtomicBool,
    ) -> Result<Server, WorkloadError> {
        if !dir.join("pgdata/PG_VERSION").is_file() {
            return Err(WorkloadError::Setup(format!(
                "'{}' holds no PostgreSQL data directory (pgdata/PG_VERSION)",
                dir.display()
            )));
        }
        Server::launch(dir, options, stop, None, false)
    }

    fn launch(
        dir: &Path,
        options: &ServerOptions,
        stop: &AtomicBool,
        cgroup_procs: Option<&Path>,
        init: bool,
    ) -> Result<Server, WorkloadError> {
        // Opened here, as iolab: the kernel checks the rights of the descriptor's opener.
        let cgroup = cgroup_procs
            .map(|p| {
                fs::OpenOptions::new()
                    .write(true)
                    .open(p)
                    .map_err(|e| WorkloadError::io(format!("opening '{}' for the server", p.display()), e))
            })
            .transpose()?;
        let bindir = find_bindir()?;
        let account = server_account()?;
        let dir = prepare_dir(dir, account.as_ref())?;
        let data = dir.join("pgdata");
        if init {
            initdb(&bindir, &dir, &data, account.as_ref())?;
        }
        let log = dir.join("postgres.log");
        let mut cmd = server_command(&bindir, &dir, &data, &log, options, account.as_ref())?;
        join_on_exec(&mut cmd, cgroup.as_ref().map(std::os::fd::AsRawFd::as_raw_fd));
        let child = cmd
            .spawn()
            .map_err(|e| WorkloadError::io(format!("starting {}", bindir.join("postgres").display()), e))?;
        drop(cgroup);
        live().push(child.id() as i32);
        let mut server = Server { child: Some(child), dir: dir.clone(), log, account };
        server.wait_ready(stop)?;
        Ok(server)
    }

    /// The server's processes, known by construction: the postmaster iolab spawned (its child, never a
    /// process id read from a file the server's account can write) and every process in the process group
    /// it leads (iolab started it as the group's leader; its backends are in the group).
    pub fn processes(&self) -> Vec<u32> {
        let Some(leader) = self.child.as_ref().map(Child::id) else { return Vec::new() };
        let mut out = vec![leader];
        for entry in fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
            if pid != leader && process_group(&entry.path()) == Some(leader) {
                out.push(pid);
            }
        }
        out
    }

    /// Waits until the server accepts a connection, has exited, or `stop` is raised.
    fn wait_ready(&mut self, stop: &AtomicBool) -> Result<(), WorkloadError> {
        let started = Instant::now();
        loop {
            if let Some(child) = &mut self.child {
                if let Ok(Some(status)) = child.try_wait() {
                    self.forget();
                    return Err(WorkloadError::Setup(format!(
                        "the PostgreSQL server exited at start ({status}); its log ({}) ends:\n{}",
                        self.log.display(),
                        tail(&self.log, 20)
                    )));
                }
            }
            // Bounded: a server that accepts and never answers (stopped mid-start) cannot hold the wait.
            let attempt = Duration::from_secs(5);
            if super::connect::connect_bounded(&self.config(), attempt, Some(stop), "", &str::to_string)
                .is_ok()
            {
                return Ok(());
            }
            if stop.load(Ordering::Relaxed) {
                let _ = self.stop();
                return Err(WorkloadError::Interrupted);
            }
            if started.elapsed() > Duration::from_secs(READY_TIMEOUT_S) {
                let _ = self.stop();
                return Err(WorkloadError::Setup(format!(
                    "the PostgreSQL server did not accept connections within {READY_TIMEOUT_S} s; its log ({}) ends:\n{}",
                    self.log.display(),
                    tail(&self.log, 20)
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// How to connect: the socket in the directory, as [`USER`], to the `postgres` database.
    pub fn config(&self) -> postgres::Config {
        let mut c = postgres::Config::new();
        c.host_path(&self.dir).port(PORT).user(USER).dbname("postgres");
        c.connect_timeout(Duration::from_secs(5));
        c
    }

    /// The account the server runs as, in words: `postgres (uid 101)`, or iolab's own user.
    pub fn user_text(&self) -> String {
        match &self.account {
            Some(a) => format!("{} (uid {}), since PostgreSQL refuses to run as root", a.name, a.uid),
            None => format!("iolab's own user (uid {})", nix::unistd::geteuid()),
        }
    }

    /// The server's log.
    pub fn log(&self) -> &Path {
        &self.log
    }

    /// Copies the running server's data directory into `to` (an empty directory iolab made) with
    /// `pg_basebackup` over the socket: a fast checkpoint first, the WAL streamed alongside, every file
    /// synced before it returns (pg_basebackup's default), run as the server's account when iolab is root.
    /// The copy lands in `to/pgdata`. A raised `stop` kills it and returns [`WorkloadError::Interrupted`].
    pub fn base_backup(&self, to: &Path, stop: &AtomicBool) -> Result<PathBuf, WorkloadError> {
        let bindir = find_bindir()?;
        if !bindir.join("pg_basebackup").is_file() {
            return Err(WorkloadError::Setup(format!(
                "pg_basebackup is not in {} (Debian and Ubuntu: apt-get install postgresql-client)",
                bindir.display()
            )));
        }
        let to =
            std::path::absolute(to).map_err(|e| WorkloadError::io("resolving the copy's directory", e))?;
        if let Some(a) = &self.account {
            check_reachable(&to, a)?;
            std::os::unix::fs::chown(&to, Some(a.uid), Some(a.gid)).map_err(|e| {
                WorkloadError::io(format!("giving '{}' to the '{}' account", to.display(), a.name), e)
            })?;
        }
        let target = to.join("pgdata");
        let mut child = program(&bindir, "pg_basebackup", &self.dir, self.account.as_ref())
            .arg("-D")
            .arg(&target)
            .arg("-h")
            .arg(&self.dir)
            .args(["-p", &PORT.to_string(), "-U", USER, "--checkpoint=fast", "--wal-method=stream"])
            .arg("--no-password")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                WorkloadError::io(format!("running {}", bindir.join("pg_basebackup").display()), e)
            })?;
        loop {
            if let Some(status) =
                child.try_wait().map_err(|e| WorkloadError::io("waiting for pg_basebackup", e))?
            {
                if status.success() {
                    return Ok(target);
                }
                let mut err = String::new();
                if let Some(mut e) = child.stderr.take() {
                    let _ = e.read_to_string(&mut err);
                }
                return Err(WorkloadError::Setup(format!("pg_basebackup failed ({status}): {}", err.trim())));
            }
            if stop.load(Ordering::Relaxed) {
                let _ = child.kill();
                let _ = child.wait();
                return Err(WorkloadError::Interrupted);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Stops the server: a fast shutdown (SIGINT: sessions ended, a checkpoint written), then an immediate
    /// one (SIGQUIT) after [`FAST_STOP_S`], then SIGKILL; waits for it to exit. Idempotent.
    pub fn stop(&mut self) -> Result<(), WorkloadError> {
        let Some(mut child) = self.child.take() else { return Ok(()) };
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        let steps = [
            (nix::sys::signal::Signal::SIGINT, FAST_STOP_S),
            (nix::sys::signal::Signal::SIGQUIT, 5),
            (nix::sys::signal::Signal::SIGKILL, 5),
        ];
        for (signal, wait_s) in steps {
            let _ = nix::sys::signal::kill(pid, signal);
            let until = Instant::now() + Duration::from_secs(wait_s);
            while Instant::now() < until {
                if let Ok(Some(_)) = child.try_wait() {
                    group_gone(pid);
                    live().retain(|p| *p != pid.as_raw());
                    return Ok(());
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        live().retain(|p| *p != pid.as_raw());
        Err(WorkloadError::Setup(format!(
            "the PostgreSQL server (pid {pid}) did not exit, even after SIGKILL"
        )))
    }

    /// Forgets a server that has exited by itself.
    fn forget(&mut self) {
        if let Some(child) = self.child.take() {
            live().retain(|p| *p != child.id() as i32);
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// Stops every private server at once (SIGQUIT, PostgreSQL's immediate shutdown), waiting up to 5 s for
/// each to exit, then killing what is left of it, for an exit that skips destructors. A server whose
/// processes were stopped (SIGSTOP: one that stopped answering) is continued first, so it can take the
/// signal; its processes are its process group, which the postmaster (iolab's unreaped child) leads.
pub fn cleanup_on_exit() {
    use nix::sys::signal::{kill, killpg, Signal};
    use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
    let pids = std::mem::take(&mut *live());
    for pid in pids {
        let pid = nix::unistd::Pid::from_raw(pid);
        let _ = killpg(pid, Signal::SIGCONT);
        let _ = kill(pid, Signal::SIGQUIT);
        let exited = |wait: Duration| {
            let until = Instant::now() + wait;
            while Instant::now() < until {
                match waitpid(pid, Some(WaitPidFlag::WNOHANG)) {
                    Ok(WaitStatus::StillAlive) => std::thread::sleep(Duration::from_millis(20)),
                    _ => return true,
                }
            }
            false
        };
        if !exited(Duration::from_secs(5)) {
            let _ = killpg(pid, Signal::SIGKILL);
            exited(Duration::from_secs(1));
        }
        group_gone(pid);
    }
}

/// Waits until no process of the server's group (led by `leader`) is left, killing what is left after a
/// second: the postmaster can be gone while a backend it forked still writes into the database directory,
/// which must not be removed under it.
fn group_gone(leader: nix::unistd::Pid) {
    use nix::sys::signal::{killpg, Signal};
    let until = Instant::now() + Duration::from_secs(3);
    let mut killed = false;
    while killpg(leader, None).is_ok() && Instant::now() < until {
        if !killed && Instant::now() + Duration::from_secs(2) >= until {
            let _ = killpg(leader, Signal::SIGCONT);
            let _ = killpg(leader, Signal::SIGKILL);
            killed = true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
