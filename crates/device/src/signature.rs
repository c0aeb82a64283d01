//! Signatures: what a device or file appears to hold.
//!
//! Before a write job touches a block device or an existing file, the target stage reads its first
//! [`SIGNATURE_HEAD_BYTES`] and refuses (unless `--destroy-data`) when they carry a filesystem, swap, a
//! volume-manager or RAID label, a partition table, a database or a disk image. [`identify`] asks two
//! probers: a short list of magic numbers here (the formats `blkid` does not know: SQLite, iolab's journal,
//! the disk-image formats qcow2, VMDK, VHD(X) and VDI; and the common filesystems, so a machine without
//! util-linux is still protected), then util-linux's `blkid -p`, which knows hundreds of filesystems, RAID
//! members and partition tables. A false alarm only costs the user a flag.

/// How many leading bytes [`detect_signature`] looks at: 68 KiB covers the btrfs superblock at 64 KiB + 64
/// and the iso9660 volume descriptor at 32 KiB + 1.
pub const SIGNATURE_HEAD_BYTES: usize = 68 * 1024;

fn has(head: &[u8], offset: usize, magic: &[u8]) -> bool {
    head.get(offset..offset + magic.len()) == Some(magic)
}

fn le32(head: &[u8], offset: usize) -> u32 {
    head.get(offset..offset + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])).unwrap_or(0)
}

/// The disk-image formats of virtual machines, by their magic numbers (which `blkid` does not probe).
fn disk_image(head: &[u8]) -> Option<&'static str> {
    if has(head, 0, b"QFI\xfb") {
        Some("qcow2 disk image")
    } else if has(head, 0, b"KDMV") || has(head, 0, b"# Disk DescriptorFile") {
        Some("VMDK disk image")
    } else if has(head, 0, b"vhdxfile") {
        Some("VHDX disk image")
    } else if has(head, 0, b"conectix") {
        Some("VHD disk image")
    } else if has(head, 64, &[0x7f, 0x10, 0xda, 0xbe]) {
        Some("VDI disk image")
    } else {
        None
    }
}

/// Returns a description of the filesystem, volume or partition-table signature found in `head` (the
/// first bytes of a device, ideally [`SIGNATURE_HEAD_BYTES`] of them), or `None` when nothing is recognised.
///
/// Descriptions read well after "it carries a(n) …": "ext4 filesystem", "xfs filesystem", "btrfs filesystem",
/// "swap space", "LVM2 physical volume", "LUKS encrypted volume", "GPT partition table",
/// "dos partition table", "dos boot sector", "FAT filesystem", "NTFS filesystem", "iso9660 filesystem",
/// "SQLite database" (iolab's catalog is one), "iolab journal", "iolab durable-write log" (beside a journal),
/// "qcow2 disk image" (and VMDK, VHDX, VHD,
/// VDI).
/// A shorter `head` only means fewer checks can match.
pub fn detect_signature(head: &[u8]) -> Option<&'static str> {
    // Checked from the most specific to the least: GPT and FAT/NTFS also carry 0x55AA at 510.
    // Databases first: iolab's own catalog (an SQLite file) and journal must never become a write target.
    if has(head, 0, b"SQLite format 3\0") {
        return Some("SQLite database");
    }
    if has(head, 0, b"IOLABJNL") {
        return Some("iolab journal");
    }
    if has(head, 0, b"IOLABDUR") {
        return Some("iolab durable-write log");
    }
    if let Some(image) = disk_image(head) {
        return Some(image);
    }
    if has(head, 0, b"LUKS\xba\xbe") {
        return Some("LUKS encrypted volume");
    }
    if has(head, 0, b"XFSB") {
        return Some("xfs filesystem");
    }
    // LVM2 label: "LABELONE" in one of the first four 512-byte sectors.
    if (0..4).any(|sector| has(head, sector * 512, b"LABELONE")) {
        return Some("LVM2 physical volume");
    }
    if has(head, 512, b"EFI PART") || has(head, 4096, b"EFI PART") {
        return Some("GPT partition table");
    }
    // Swap: the magic is in the last 10 bytes of the first page (4 KiB pages, or 64 KiB on some arm64/ppc64).
    for page in [4096usize, 65536] {
        if has(head, page - 10, b"SWAPSPACE2") || has(head, page - 10, b"SWAP-SPACE") {
            return Some("swap space");
        }
    }
    if has(head, 65600, b"_BHRfS_M") {
        return Some("btrfs filesystem");
    }
    // ext2/3/4: superblock at 1024, s_magic 0xEF53 (little endian) at +56.
    if has(head, 1080, &[0x53, 0xEF]) {
        let compat = le32(head, 1024 + 0x5C);
        let incompat = le32(head, 1024 + 0x60);
        let ro_compat = le32(head, 1024 + 0x64);
        // ext4-only features: extents 0x40, 64bit 0x80, flex_bg 0x200; huge_file 0x8, gdt_csum 0x10,
        // dir_nlink 0x20, extra_isize 0x40, metadata_csum 0x400 (ro_compat).
        if incompat & (0x40 | 0x80 | 0x200) != 0 || ro_compat & (0x8 | 0x10 | 0x20 | 0x40 | 0x400) != 0 {
            return Some("ext4 filesystem");
        }
        if compat & 0x4 != 0 {
            return Some("ext3 filesystem");
        }
        return Some("ext2 filesystem");
    }
    if has(head, 3, b"NTFS    ") {
        return Some("NTFS filesystem");
    }
    if has(head, 82, b"FAT32   ") || has(head, 54, b"FAT12   ") || has(head, 54, b"FAT16   ") {
        return Some("FAT filesystem");
    }
    if has(head, 32769, b"CD001") {
        return Some("iso9660 filesystem");
    }
    if has(head, 510, &[0x55, 0xAA]) {
        return Some(if dos_partition_table_is_sane(head) {
            "dos partition table"
        } else {
            "dos boot sector"
        });
    }
    None
}

/// What `head` (the first bytes of `path`) appears to hold: [`detect_signature`]'s answer, else
/// `blkid -p`'s (when util-linux is installed), as "TYPE USAGE" ("zfs_member raid", "minix filesystem").
pub fn identify(path: &std::path::Path, head: &[u8]) -> Option<String> {
    detect_signature(head).map(str::to_string).or_else(|| blkid(path))
}

/// `blkid -p -o export PATH`: low-level probing of superblocks and partition tables (no cache, no udev).
fn blkid(path: &std::path::Path) -> Option<String> {
    let out = std::process::Command::new("blkid")
        .args(["-p", "-o", "export", "--"])
        .arg(path)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let value = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
            .map(|v| v.chars().take(64).collect())
    };
    if let Some(ty) = value("TYPE") {
        let usage: String = value("USAGE").unwrap_or_else(|| "volume".to_string());
        let usage = if usage == "other" { "volume".to_string() } else { usage };
        return Some(format!("{ty} {usage}"));
    }
    value("PTTYPE").map(|t: String| format!("{t} partition table"))
}

/// Words for what an unrecognised file's first bytes look like: "zeros", "text" or "binary data".
pub fn describe_head(head: &[u8]) -> &'static str {
    if head.iter().all(|&b| b == 0) {
        "zeros"
    } else if std::str::from_utf8(head).is_ok_and(|t| t.chars().all(|c| !c.is_control() || c.is_whitespace()))
    {
        "text"
    } else {
        "binary data"
    }
}

/// True when the four MBR partition entries at 446 have valid boot flags and at least one is in use.
fn dos_partition_table_is_sane(head: &[u8]) -> bool {
    let mut used = 0;
    for i in 0..4 {
        let entry = &head[446 + 16 * i..446 + 16 * (i + 1)];
        if entry[0] != 0x00 && entry[0] != 0x80 {
            return false;
        }
        let partition_type = entry[4];
        let sector_count = le32(entry, 12);
        if partition_type != 0 && sector_count != 0 {
            used += 1;
        }
    }
    used > 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zeroed() -> Vec<u8> {
        vec![0u8; SIGNATURE_HEAD_BYTES]
    }

    #[test]
    fn detect_signature_zero_buffer_is_none() {
        assert_eq!(detect_signature(&zeroed()), None);
        assert_eq!(detect_signature(&[]), None);
    }

    #[test]
    fn detect_signature_ext_variants_by_features() {
        let mut h = zeroed();
        h[1080] = 0x53;
        h[1081] = 0xEF;
        assert_eq!(detect_signature(&h), Some("ext2 filesystem"));
        h[1024 + 0x5C] = 0x4; // has_journal
        assert_eq!(detect_signature(&h), Some("ext3 filesystem"));
        h[1024 + 0x60] = 0x40; // extents
        assert_eq!(detect_signature(&h), Some("ext4 filesystem"));
    }

    #[test]
    fn detect_signature_xfs_luks_lvm() {
        let mut h = zeroed();
        h[..4].copy_from_slice(b"XFSB");
        assert_eq!(detect_signature(&h), Some("xfs filesystem"));
        let mut h = zeroed();
        h[..6].copy_from_slice(b"LUKS\xba\xbe");
        assert_eq!(detect_signature(&h), Some("LUKS encrypted volume"));
        let mut h = zeroed();
        h[512..520].copy_from_slice(b"LABELONE");
        assert_eq!(detect_signature(&h), Some("LVM2 physical volume"));
    }

    #[test]
    fn detect_signature_gpt_wins_over_protective_mbr() {
        let mut h = zeroed();
        h[510] = 0x55;
        h[511] = 0xAA;
        h[446 + 4] = 0xEE;
        h[446 + 12] = 1;
        h[512..520].copy_from_slice(b"EFI PART");
        assert_eq!(detect_signature(&h), Some("GPT partition table"));
    }

    #[test]
    fn detect_signature_mbr_table_and_boot_sector() {
        let mut h = zeroed();
        h[510] = 0x55;
        h[511] = 0xAA;
        assert_eq!(detect_signature(&h), Some("dos boot sector"));
        h[446] = 0x80;
        h[446 + 4] = 0x83;
        h[446 + 12..446 + 16].copy_from_slice(&2048u32.to_le_bytes());
        assert_eq!(detect_signature(&h), Some("dos partition table"));
    }

    #[test]
    fn detect_signature_swap_btrfs_fat_ntfs_iso() {
        let cases: [(usize, &[u8], &str); 6] = [
            (4086, b"SWAPSPACE2", "swap space"),
            (65600, b"_BHRfS_M", "btrfs filesystem"),
            (82, b"FAT32   ", "FAT filesystem"),
            (54, b"FAT16   ", "FAT filesystem"),
            (3, b"NTFS    ", "NTFS filesystem"),
            (32769, b"CD001", "iso9660 filesystem"),
        ];
        for (offset, magic, want) in cases {
            let mut h = zeroed();
            h[offset..offset + magic.len()].copy_from_slice(magic);
            assert_eq!(detect_signature(&h), Some(want), "magic at {offset}");
        }
    }

    #[test]
    fn detect_signature_sqlite_database_and_iolab_journal() {
        let mut h = zeroed();
        h[..16].copy_from_slice(b"SQLite format 3\0");
        assert_eq!(detect_signature(&h), Some("SQLite database"));
        let mut h = zeroed();
        h[..8].copy_from_slice(b"IOLABJNL");
        assert_eq!(detect_signature(&h), Some("iolab journal"));
        h[..8].copy_from_slice(b"IOLABDUR");
        assert_eq!(detect_signature(&h), Some("iolab durable-write log"));
    }

    #[test]
    fn detect_signature_names_disk_images() {
        let cases: [(usize, &[u8], &str); 5] = [
            (0, b"QFI\xfb", "qcow2 disk image"),
            (0, b"KDMV", "VMDK disk image"),
            (0, b"vhdxfile", "VHDX disk image"),
            (0, b"conectix", "VHD disk image"),
            (64, &[0x7f, 0x10, 0xda, 0xbe], "VDI disk image"),
        ];
        for (offset, magic, want) in cases {
            let mut h = zeroed();
            h[offset..offset + magic.len()].copy_from_slice(magic);
            assert_eq!(detect_signature(&h), Some(want), "magic at {offset}");
        }
    }

    #[test]
    fn blkid_names_what_the_home_made_list_does_not() {
        // A minix file system (the magic 0x137F at 1024 + 16): blkid knows it, the list above does not.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("minix.img");
        let mut h = zeroed();
        h[1024 + 16..1024 + 18].copy_from_slice(&0x137Fu16.to_le_bytes());
        std::fs::write(&path, &h).unwrap();
        if std::process::Command::new("blkid").arg("-V").output().is_err() {
            iolab_testkit::skip(format_args!("blkid (util-linux) is not installed"));
            return;
        }
        assert_eq!(detect_signature(&h), None);
        let found = identify(&path, &h);
        // blkid's minix prober checks more of the superblock than the magic; either way no panic and, when
        // it recognises the file, a name.
        if let Some(found) = found {
            assert!(found.contains("minix"), "{found}");
        }
    }

    #[test]
    fn describe_head_says_zeros_text_or_data() {
        assert_eq!(describe_head(&[0; 16]), "zeros");
        assert_eq!(describe_head(b"precious notes\n"), "text");
        assert_eq!(describe_head(&[0xff, 0x00, 0x13]), "binary data");
    }

    #[test]
    fn detect_signature_short_head_does_not_panic() {
        let mut h = vec![0u8; 600];
        h[510] = 0x55;
        h[511] = 0xAA;
        assert_eq!(detect_signature(&h), Some("dos boot sector"));
        assert_eq!(detect_signature(&h[..100]), None);
    }
}
