//! The one reader of the text files a user names and iolab reads whole (job files, fio and Iometer files,
//! result and sweep documents): a regular file, no bigger than its kind's bound, refused otherwise before a
//! byte is read. A device (`/dev/zero`), a pipe or a directory never reaches a parser.

use std::io::Read;
use std::path::Path;

/// Largest job file (TOML, fio or Iometer) read: far above any real one, far below what would strain memory.
pub const MAX_JOB_FILE_BYTES: u64 = 16 << 20;

/// Largest result, sweep or comparison document read (JSON with its histograms).
pub const MAX_DOCUMENT_BYTES: u64 = 256 << 20;

/// Why a named input was not read. Each quotes the path and says what was expected.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The file cannot be opened or read.
    #[error("cannot read {what} '{path}': {source}")]
    Io {
        /// What the file is for (`the job file`).
        what: String,
        /// The path as given.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// Not a regular file: a device, a pipe, a socket or a directory.
    #[error("{what} '{path}' is {kind}; expected a regular file")]
    NotAFile {
        /// What the file is for.
        what: String,
        /// The path as given.
        path: String,
        /// What it is (`a character device`).
        kind: &'static str,
    },
    /// Larger than its kind's bound.
    #[error("{what} '{path}' is {size} bytes; expected at most {limit} bytes ({} MiB)", limit >> 20)]
    TooBig {
        /// What the file is for.
        what: String,
        /// The path as given.
        path: String,
        /// Its size (at least; a file still growing is cut at the limit).
        size: u64,
        /// The bound.
        limit: u64,
    },
    /// Not UTF-8 text.
    #[error("{what} '{path}' is not UTF-8 text; expected a text file")]
    NotText {
        /// What the file is for.
        what: String,
        /// The path as given.
        path: String,
    },
}

/// Reads the regular file `path` whole as text, refusing anything else and anything over `limit` bytes.
/// `what` names it in errors (`the job file`).
pub fn read_text(path: &Path, what: &str, limit: u64) -> Result<String, InputError> {
    let shown = path.display().to_string();
    let io = |source| InputError::Io { what: what.into(), path: shown.clone(), source };
    // Checked before opening (a FIFO's open would wait for a writer) and again on the open file.
    check_kind(&std::fs::metadata(path).map_err(io)?, what, &shown, limit)?;
    let file = std::fs::File::open(path).map_err(io)?;
    check_kind(&file.metadata().map_err(io)?, what, &shown, limit)?;
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(InputError::TooBig { what: what.into(), path: shown, size: bytes.len() as u64, limit });
    }
    String::from_utf8(bytes).map_err(|_| InputError::NotText { what: what.into(), path: shown })
}

fn check_kind(meta: &std::fs::Metadata, what: &str, path: &str, limit: u64) -> Result<(), InputError> {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    let kind = match () {
        _ if t.is_file() => None,
        _ if t.is_dir() => Some("a directory"),
        _ if t.is_char_device() => Some("a character device"),
        _ if t.is_block_device() => Some("a block device"),
        _ if t.is_fifo() => Some("a named pipe"),
        _ if t.is_socket() => Some("a socket"),
        _ => Some("not a regular file"),
    };
    if let Some(kind) = kind {
        return Err(InputError::NotAFile { what: what.into(), path: path.into(), kind });
    }
    if meta.len() > limit {
        return Err(InputError::TooBig { what: what.into(), path: path.into(), size: meta.len(), limit });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_within_the_bound_are_read() {
        let what = "the job file";
        let e = read_text(Path::new("/dev/zero"), what, 1 << 20).unwrap_err().to_string();
        assert_eq!(e, "the job file '/dev/zero' is a character device; expected a regular file");
        let e = read_text(Path::new("/"), what, 1 << 20).unwrap_err().to_string();
        assert!(e.contains("is a directory"), "{e}");
        let dir = std::env::temp_dir().join(format!("iolab-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("big.toml");
        std::fs::write(&f, vec![b'#'; (1 << 20) + 1]).unwrap();
        let e = read_text(&f, what, 1 << 20).unwrap_err().to_string();
        assert!(e.contains("is 1048577 bytes; expected at most 1048576 bytes (1 MiB)"), "{e}");
        std::fs::write(&f, "x = 1\n").unwrap();
        assert_eq!(read_text(&f, what, 1 << 20).unwrap(), "x = 1\n");
        std::fs::write(&f, [0xff, 0xfe]).unwrap();
        assert!(read_text(&f, what, 1 << 20).unwrap_err().to_string().contains("not UTF-8"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
