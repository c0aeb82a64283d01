//! Tests of probe and open on regular files, images and (when root and losetup allow) a loop device.

use super::*;
use crate::{remove_scratch_files, ScratchGuard};
use std::io::Read;
use std::process::Command;

fn path_request(path: &Path) -> OpenRequest {
    OpenRequest::new(TargetSpec::Path { path: path.display().to_string() })
}

fn write_file(path: &Path, len: usize) -> Vec<u8> {
    let data: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
    fs::write(path, &data).unwrap();
    data
}

#[test]
fn probe_missing_file_without_size_is_error_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f0");
    let req = path_request(&path);
    let err = probe(&req).unwrap_err();
    assert!(matches!(err, TargetError::NotFound { .. }), "{err}");
    assert_eq!(err.to_string(), format!("'{}' does not exist; give --size to create it", path.display()));
    let err = open(&req).unwrap_err();
    assert!(matches!(err, TargetError::NotFound { .. }), "{err}");
    assert!(!path.exists());
}

#[test]
fn probe_missing_parent_directory_is_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nope/f0");
    let mut req = path_request(&path);
    req.create_size = Some(1 << 20);
    let err = open(&req).unwrap_err();
    assert!(matches!(err, TargetError::DirectoryMissing { .. }), "{err}");
    assert!(err
        .to_string()
        .contains(&format!("directory '{}' does not exist", dir.path().join("nope").display())));
    assert!(!dir.path().join("nope").exists());
}

#[test]
fn open_missing_file_with_size_creates_full_file_without_holes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f0");
    let mut req = path_request(&path);
    req.direct = false;
    req.create_size = Some(3 << 20 | 4096);
    let p = probe(&req).unwrap();
    assert!(p.will_create && !p.exists);
    assert!(!path.exists(), "probe must not create");
    let t = open(&req).unwrap();
    assert!(t.created && !t.scratch);
    assert!(t.fill_s.is_some());
    assert!(!t.has_holes);
    assert_eq!(t.probe.size_bytes, 3 << 20 | 4096);
    let meta = fs::metadata(&path).unwrap();
    assert_eq!(meta.len(), 3 << 20 | 4096);
    assert_eq!(meta.mode() & 0o777, 0o644);
    // Allocated on disk (no holes) and not all zeros.
    assert!(meta.blocks() * 512 >= meta.len());
    let mut head = vec![0u8; 8192];
    fs::File::open(&path).unwrap().read_exact(&mut head).unwrap();
    assert!(head.iter().filter(|&&b| b == 0).count() < 200);
    assert_eq!(t.probe.logical_block_size, 1, "buffered I/O has no alignment");
}

#[test]
fn open_existing_file_smaller_than_size_read_only_is_error_and_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f0");
    let data = write_file(&path, 1 << 20);
    let mut req = path_request(&path);
    req.create_size = Some(8 << 20);
    let err = open(&req).unwrap_err();
    assert!(matches!(err, TargetError::TooSmall { .. }), "{err}");
    assert!(err.to_string().contains("is 1 MiB, smaller than --size 8 MiB"), "{err}");
    assert_eq!(fs::read(&path).unwrap(), data);
}

#[test]
fn open_existing_file_smaller_than_size_write_job_extends_and_keeps_data() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f0");
    let data = write_file(&path, 1 << 20);
    let mut req = path_request(&path);
    req.direct = false;
    req.writes = true;
    req.create_size = Some(3 << 20);
    // Not iolab's: extended only with --overwrite.
    req.consent.overwrite = true;
    let p = probe(&req).unwrap();
    assert_eq!(p.will_extend_to, Some(3 << 20));
    let t = open(&req).unwrap();
    assert!(!t.created && t.fill_s.is_some() && !t.has_holes);
    let now = fs::read(&path).unwrap();
    assert_eq!(now.len(), 3 << 20);
    assert_eq!(&now[..1 << 20], &data[..]);
}

#[test]
fn open_existing_sparse_file_reports_holes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sparse");
    let f = fs::File::create(&path).unwrap();
    f.set_len(16 << 20).unwrap();
    f.write_all_at(&[1u8; 4096], 0).unwrap();
    drop(f);
    let mut req = path_request(&path);
    req.direct = false;
    let t = open(&req).unwrap();
    // File systems without SEEK_HOLE support report no holes; ext4, xfs, btrfs and tmpfs support it.
    println!("sparse file on {:?}: has_holes = {}", t.probe.fs_type, t.has_holes);
    if matches!(t.probe.fs_type.as_deref(), Some("ext4" | "xfs" | "btrfs" | "tmpfs")) {
        assert!(t.has_holes);
    }
}

#[test]
fn probe_empty_existing_file_without_size_is_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty");
    fs::File::create(&path).unwrap();
    let err = probe(&path_request(&path)).unwrap_err();
    assert!(matches!(err, TargetError::Empty { .. }), "{err}");
}

#[test]
fn probe_empty_existing_file_with_size_on_a_read_says_to_fill_it_with_a_write_job() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty");
    fs::File::create(&path).unwrap();
    let mut req = path_request(&path);
    req.create_size = Some(1 << 30);
    let err = probe(&req).unwrap_err();
    assert!(matches!(err, TargetError::Empty { .. }), "{err}");
    assert!(err.to_string().contains("--rw write --size 1G"), "{err}");
}

#[test]
fn probe_directory_target_is_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = probe(&path_request(dir.path())).unwrap_err();
    assert!(matches!(err, TargetError::IsDirectory { .. }), "{err}");
    assert!(err.to_string().ends_with("is a directory; give a file path inside it"));
}

#[test]
fn probe_char_device_is_unsupported() {
    let err = probe(&path_request(Path::new("/dev/null"))).unwrap_err();
    assert!(matches!(err, TargetError::UnsupportedFileType { file_type: "character device", .. }), "{err}");
}

#[test]
fn probe_virtual_targets_have_size_and_512_byte_blocks() {
    for (spec, kind) in [
        (TargetSpec::Null { size_bytes: 1 << 30 }, TargetKind::Null),
        (
            TargetSpec::Sim(iolab_spec::SimSpec::Fixed { latency_ns: 1000, servers: 1, size_bytes: 1 << 30 }),
            TargetKind::Sim,
        ),
        (TargetSpec::Mem { size_bytes: 1 << 20 }, TargetKind::Mem),
    ] {
        let req = OpenRequest::new(spec);
        let p = probe(&req).unwrap();
        assert_eq!((p.kind, p.logical_block_size), (kind, 512));
        let t = open(&req).unwrap();
        assert!(t.file.is_none());
        assert_eq!(t.mem.is_some(), kind == TargetKind::Mem);
    }
}

fn direct_open_report(dir: &Path) {
    let path = dir.join("iolab-direct-probe");
    let mut req = path_request(&path);
    req.create_size = Some(1 << 20);
    match open(&req) {
        Ok(t) => {
            println!(
                "O_DIRECT in {} ({:?}): ok, logical_block_size {} (device {:?}, model {:?}, rotational {:?}, tmpfs {})",
                dir.display(),
                t.probe.fs_type,
                t.probe.logical_block_size,
                t.probe.device_block_size,
                t.probe.device_model,
                t.probe.rotational,
                t.probe.tmpfs
            );
            assert!(t.direct && t.created);
            assert!(t.probe.logical_block_size.is_power_of_two() && t.probe.logical_block_size >= 512);
            let _ = fs::remove_file(&path);
        }
        Err(e @ TargetError::DirectUnsupported { .. }) => {
            println!("O_DIRECT in {}: {e}", dir.display());
            assert!(e.to_string().contains("hint: use --buffered"));
            assert!(!path.exists(), "a refused O_DIRECT open must leave nothing behind");
        }
        Err(e) => panic!("unexpected error in {}: {e}", dir.display()),
    }
}

#[test]
fn open_direct_on_tmpfs_and_disk_works_or_is_direct_unsupported() {
    let disk = tempfile::tempdir().unwrap();
    direct_open_report(disk.path());
    if Path::new("/dev/shm").is_dir() {
        let shm = tempfile::tempdir_in("/dev/shm").unwrap();
        direct_open_report(shm.path());
    }
}

/// The only test touching the process-wide scratch registry (tests run in parallel).
#[test]
fn scratch_registry_removes_files_and_open_registers_scratch() {
    let dir = tempfile::tempdir().unwrap();
    let manual = dir.path().join("manual");
    fs::write(&manual, b"x").unwrap();
    crate::register_scratch(&manual).unwrap();
    let created = dir.path().join("scratch");
    let mut req = path_request(&created);
    req.direct = false;
    req.writes = true;
    req.scratch = true;
    req.create_size = Some(1 << 20);
    let t = open(&req).unwrap();
    assert!(t.scratch && created.exists());
    {
        let _guard = ScratchGuard;
    }
    assert!(!manual.exists() && !created.exists());
    remove_scratch_files(); // idempotent
    swapped_scratch_directory_removes_nothing_elsewhere();
}

/// The scratch directory swapped for a symlink to another directory during the run (which has a file of
/// the scratch file's name): the cleanup removes the scratch file from the directory it was created in,
/// and nothing from the other one.
fn swapped_scratch_directory_removes_nothing_elsewhere() {
    let top = tempfile::tempdir().unwrap();
    let (dir, moved, other) = (top.path().join("dir"), top.path().join("moved"), top.path().join("other"));
    fs::create_dir(&dir).unwrap();
    fs::create_dir(&other).unwrap();
    let created = dir.join("scratch");
    let mut req = path_request(&created);
    (req.direct, req.writes, req.scratch, req.create_size) = (false, true, true, Some(1 << 20));
    let t = open(&req).unwrap();
    assert!(t.scratch);
    fs::rename(&dir, &moved).unwrap();
    std::os::unix::fs::symlink(&other, &dir).unwrap();
    fs::write(other.join("scratch"), b"not iolab's").unwrap();
    drop(t);
    remove_scratch_files();
    assert!(other.join("scratch").exists(), "a file in the directory the symlink names was removed");
    assert!(!moved.join("scratch").exists(), "the scratch file was left behind");
}

#[test]
fn probe_block_device_read_only_needs_no_flag_and_size_is_refused() {
    // Any block device will do; this only reads.
    let Some(dev) = ["/dev/vda", "/dev/sda", "/dev/nvme0n1", "/dev/loop0"]
        .into_iter()
        .find(|d| fs::metadata(d).is_ok_and(|m| m.file_type().is_block_device()))
    else {
        iolab_testkit::skip(format_args!("no block device found"));
        return;
    };
    let mut req = path_request(Path::new(dev));
    match probe(&req) {
        Ok(p) => println!("{dev}: {p:?}"),
        Err(e) => println!("{dev}: {e}"),
    }
    req.create_size = Some(1 << 20);
    if let Err(e) = probe(&req) {
        assert!(
            matches!(e, TargetError::SizeOnBlockDevice { .. } | TargetError::PermissionDenied { .. }),
            "{e}"
        );
    }
}

/// A loop device over an image, detached on drop.
struct Loop(String);

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.0).status();
    }
}

fn attach_loop(image: &Path) -> Result<Loop, String> {
    if fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(1) != 0 {
        return Err("not root".into());
    }
    let out = Command::new("losetup")
        .args(["--find", "--show"])
        .arg(image)
        .output()
        .map_err(|e| format!("losetup: {e}"))?;
    if !out.status.success() {
        return Err(format!("losetup failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(Loop(String::from_utf8_lossy(&out.stdout).trim().to_string()))
}

#[test]
fn open_loop_device_with_ext4_signature_write_is_refused_without_destroy_data() {
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("disk.img");
    let mut data = vec![0u8; 8 << 20];
    data[1080] = 0x53;
    data[1081] = 0xEF;
    data[1024 + 0x60] = 0x40; // extents: ext4
    fs::write(&image, &data).unwrap();
    let lo = match attach_loop(&image) {
        Ok(lo) => lo,
        Err(reason) => {
            iolab_testkit::skip(format_args!("{reason}"));
            return;
        }
    };
    let mut req = path_request(Path::new(&lo.0));
    req.writes = true;
    let err = open(&req).unwrap_err();
    assert!(matches!(err, TargetError::WriteDeviceNotAllowed { .. }), "{err}");
    req.consent.allow_write_device = true;
    let err = open(&req).unwrap_err();
    println!("{err}");
    assert!(
        matches!(&err, TargetError::DeviceSignature { signature, .. } if signature == "ext4 filesystem"),
        "{err}"
    );
    assert!(err.to_string().contains("give --destroy-data"));
    // Reading needs no flag.
    req.writes = false;
    let t = open(&req).unwrap();
    assert_eq!(t.probe.kind, TargetKind::BlockDevice);
    assert_eq!(t.probe.size_bytes, 8 << 20);
    println!("{:?}", t.probe);
    drop(t);
    // With --destroy-data the open succeeds; nothing is written by open itself.
    req.writes = true;
    req.consent.destroy_data = true;
    let t = open(&req).unwrap();
    assert!(t.file.is_some() && t.direct);
    drop(t);
    drop(lo);
    assert_eq!(fs::read(&image).unwrap(), data, "the image must be untouched");
}

/// `--prealloc`: `fallocate` and `write` write data over the whole file (no holes); `none` creates an empty
/// file for the run's writes to grow (appending writers), and leaves a smaller file as it is.
#[test]
fn prealloc_none_leaves_an_empty_file_the_others_fill_it() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    for prealloc in [Prealloc::Fallocate, Prealloc::Write, Prealloc::None] {
        let path = dir.path().join(prealloc.as_str());
        let mut req = path_request(&path);
        req.direct = false;
        req.writes = true;
        req.create_size = Some(4 << 20);
        req.prealloc = prealloc;
        let empty = prealloc == Prealloc::None;
        let t = open(&req).unwrap();
        assert_eq!(t.probe.size_bytes, 4 << 20, "{prealloc:?}: the run addresses the size asked for");
        let meta = fs::metadata(&path).unwrap();
        assert_eq!(meta.len(), if empty { 0 } else { 4 << 20 }, "{prealloc:?}");
        assert_eq!(t.fill_s.is_none(), empty, "{prealloc:?}");
        assert!(!t.has_holes, "{prealloc:?}");
        assert_eq!(meta.blocks() == 0, empty, "{prealloc:?}: {} blocks", meta.blocks());
        req.create_size = Some(8 << 20);
        let t = open(&req).unwrap();
        assert_eq!(fs::metadata(&path).unwrap().len(), if empty { 0 } else { 8 << 20 });
        assert_eq!(t.fill_s.is_none(), empty, "{prealloc:?} extended");
    }
}

/// Rule 4 of the safety rules: a write job writes an existing file without a flag only when iolab made it
/// (or it is empty); any other file needs --overwrite, and the refusal names the file, its size, what it
/// appears to hold and the flag, and changes nothing.
#[test]
fn a_write_job_writes_only_files_iolab_made_unless_told_to_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let theirs = dir.path().join("notes.txt");
    fs::write(&theirs, "ten megabytes of someone's notes\n".repeat(1000)).unwrap();
    let before = fs::read(&theirs).unwrap();
    let mut req = path_request(&theirs);
    req.direct = false;
    req.writes = true;
    let e = open(&req).unwrap_err().to_string();
    assert!(e.contains(&theirs.display().to_string()) && e.contains("32.2 KiB"), "{e}");
    assert!(e.contains("text") && e.contains("iolab did not make") && e.contains("--overwrite"), "{e}");
    assert_eq!(fs::read(&theirs).unwrap(), before, "nothing changed");
    req.consent.overwrite = true;
    probe(&req).expect("--overwrite allows it");

    // A file iolab created is its own: a later write job writes it freely, also after a rename.
    let ours = dir.path().join("ours.dat");
    let mut create = path_request(&ours);
    create.direct = false;
    create.writes = true;
    create.create_size = Some(1 << 20);
    drop(open(&create).unwrap());
    let moved = dir.path().join("moved.dat");
    fs::rename(&ours, &moved).unwrap();
    let mut again = path_request(&moved);
    again.direct = false;
    again.writes = true;
    match crate::ownership::mark_of(&File::open(&moved).unwrap()) {
        crate::ownership::Mark::Unsupported => {
            iolab_testkit::skip(format_args!("no extended attributes on this file system"))
        }
        _ => {
            probe(&again).expect("iolab's own file needs no flag");
        }
    }
    // An empty file holds nothing to lose.
    let empty = dir.path().join("empty");
    fs::write(&empty, b"").unwrap();
    let mut req = path_request(&empty);
    req.writes = true;
    req.direct = false;
    req.create_size = Some(1 << 20);
    probe(&req).expect("an empty file may be written");
}

/// Rule 5: a file another process holds open, locks or maps is in use, refused even with --destroy-data.
#[test]
fn a_file_another_process_holds_open_is_in_use_even_with_destroy_data() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("live.db-wal");
    fs::write(&path, vec![1u8; 8192]).unwrap();
    let mut child = Command::new("sleep").arg("30").stdin(File::open(&path).unwrap()).spawn().unwrap();
    let mut req = path_request(&path);
    req.direct = false;
    req.writes = true;
    req.consent.destroy_data = true;
    let e = probe(&req);
    let _ = child.kill();
    let _ = child.wait();
    let e = e.unwrap_err().to_string();
    assert!(e.contains("held open by process") && e.contains("(sleep)"), "{e}");
    assert!(e.contains("not even with --destroy-data"), "{e}");
    probe(&req).expect("free once the other process is gone");
}
