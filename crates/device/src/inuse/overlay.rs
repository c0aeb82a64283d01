//! A file's other names through overlayfs. A file in a layer of a mounted overlay (its upper directory or
//! one of its lower ones) is also the merged file at the same place under the overlay's mount point, and a
//! merged file is also the layer file beneath it: the same data, under another (device, inode). A loop
//! device attached to the merged path records the merged identity, and a process that opened the merged
//! path holds it; the layer path has the layer's. So whether a file is in use is asked of every identity it
//! has ([`identities`]), found from the kernel's own mount table (`/proc/self/mountinfo`: each overlay's
//! device number, mount point and layers), never from the names in the messages. Bind mounts and hard links
//! need nothing here: they keep the file's one identity.

use crate::sys::{self, DevNum};
use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// The most identities one file is given (overlays over overlays): far more than any real stack.
const MAX_IDENTITIES: usize = 16;

/// A file's identity: `st_dev`, `st_ino`.
pub(crate) type Identity = (u64, u64);

/// One mounted overlay.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Overlay {
    dev: DevNum,
    mount_point: PathBuf,
    /// Its layers, highest first: the upper directory (if any), then the lower ones in order.
    layers: Vec<PathBuf>,
}

/// The mounted overlays, from the mount table.
fn overlays() -> Vec<Overlay> {
    sys::mounts()
        .into_iter()
        .filter(|m| m.fs_type == "overlay")
        .map(|m| Overlay {
            dev: m.dev,
            mount_point: PathBuf::from(&m.mount_point),
            layers: layers(&m.super_options),
        })
        .collect()
}

/// An overlay's layers from its options: `upperdir=U`, then `lowerdir=L1:L2` (a backslash escapes a comma
/// or a colon in a name), then any `lowerdir+=L` one at a time (kernel 6.7's new mount API), highest first.
fn layers(options: &str) -> Vec<PathBuf> {
    let mut upper = Vec::new();
    let mut lower = Vec::new();
    for opt in split_escaped(options, ',') {
        if let Some(u) = opt.strip_prefix("upperdir=") {
            upper.push(unescaped(u));
        } else if let Some(l) = opt.strip_prefix("lowerdir+=") {
            lower.push(unescaped(l));
        } else if let Some(l) = opt.strip_prefix("lowerdir=") {
            lower.extend(split_escaped(l, ':').into_iter().map(unescaped));
        }
    }
    upper.extend(lower);
    upper
}

/// `s` split at each `sep` not escaped by a backslash, the escapes kept.
fn split_escaped(s: &str, sep: char) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut escaped) = (0, false);
    for (i, c) in s.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == sep {
            out.push(&s[start..i]);
            start = i + 1;
        }
    }
    out.push(&s[start..]);
    out
}

/// A layer's path with its backslash escapes undone.
fn unescaped(s: &str) -> PathBuf {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        out.extend(if c == '\\' { chars.next() } else { Some(c) });
    }
    PathBuf::from(out)
}

/// Every identity of the file at `path` (identity `own`): its own, the merged file of each overlay that
/// shows it from one of its layers, and, for a merged file, the layer file beneath; followed through
/// overlays over overlays, at most [`MAX_IDENTITIES`].
pub(crate) fn identities(path: &Path, own: Identity) -> Vec<Identity> {
    let overlays = overlays();
    let start = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let mut found = vec![(start, own)];
    let mut next = 0;
    while next < found.len() && found.len() < MAX_IDENTITIES {
        let (p, id) = found[next].clone();
        for o in &overlays {
            for alias in merged_view(o, &p).into_iter().chain(layer_beneath(o, &p, id)) {
                if found.len() < MAX_IDENTITIES && !found.iter().any(|(_, i)| *i == alias.1) {
                    found.push(alias);
                }
            }
        }
        next += 1;
    }
    found.into_iter().map(|(_, id)| id).collect()
}

/// The merged file `o` shows for the layer file `path`, when `path` lies in one of its layers and no
/// higher layer hides it.
fn merged_view(o: &Overlay, path: &Path) -> Option<(PathBuf, Identity)> {
    let (i, rel) = o.layers.iter().enumerate().find_map(|(i, l)| Some((i, path.strip_prefix(l).ok()?)))?;
    if o.layers[..i].iter().any(|higher| fs::symlink_metadata(higher.join(rel)).is_ok()) {
        return None;
    }
    let merged = o.mount_point.join(rel);
    let m = fs::symlink_metadata(&merged).ok().filter(|m| m.file_type().is_file())?;
    Some((merged, (m.dev(), m.ino())))
}

/// The layer file beneath the merged file `path` (identity `id`) of `o`: the highest layer holding a regular
/// file at its place (a whiteout or a directory there hides the rest).
fn layer_beneath(o: &Overlay, path: &Path, id: Identity) -> Option<(PathBuf, Identity)> {
    if DevNum::from_dev(id.0) != o.dev {
        return None;
    }
    let rel = path.strip_prefix(&o.mount_point).ok()?;
    for layer in &o.layers {
        let candidate = layer.join(rel);
        let Ok(m) = fs::symlink_metadata(&candidate) else { continue };
        let whiteout = m.file_type().is_char_device() && m.rdev() == 0;
        return (m.file_type().is_file() && !whiteout).then(|| (candidate, (m.dev(), m.ino())));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_are_read_highest_first_with_escaped_separators() {
        let opts = r"rw,lowerdir=/l/a\:b:/l/c,upperdir=/u\,x,workdir=/w,lowerdir+=/l/d";
        let got = layers(opts);
        let want: Vec<PathBuf> = ["/u,x", "/l/a:b", "/l/c", "/l/d"].iter().map(PathBuf::from).collect();
        assert_eq!(got, want);
        assert!(layers("rw,errors=remount-ro").is_empty());
    }
}
