//! The dataset files in their real on-disk shape, as NumPy writes them: `.npy` (a 64-byte-aligned header,
//! then a `uint8` array of shape (samples, record bytes)) and `.npz` (a zip, stored, of `x.npy`, the
//! samples, and `y.npy`, their labels, as DLIO's npz generator saves `x` and `y`). `np.load` reads both.
//! A file is written in one pass: its data drawn from the seeded generator in chunks, the zip's CRC-32
//! computed on the way and put into the local header at the end. TFRecord files: [`crate::tfrecord`].

use crate::config::DataFormat;
use crate::fill::fill_with;
use iolab_rng::Rng;
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;

/// Where a file's samples are: sample `i` is `sample_len` bytes at `data_offset + i * sample_len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampleLayout {
    /// Where the first sample starts.
    pub data_offset: u64,
    /// Bytes of each sample in this file.
    pub sample_len: u64,
    /// The file's size.
    pub file_len: u64,
}

/// The `.npy` header of a `uint8` array of `shape`, padded so the data starts at a multiple of 64.
pub fn npy_header(shape: &[u64]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    let shape = if dims.len() == 1 { format!("({},)", dims[0]) } else { format!("({})", dims.join(", ")) };
    let mut dict = format!("{{'descr': '|u1', 'fortran_order': False, 'shape': {shape}, }}");
    let unpadded = 10 + dict.len() + 1;
    dict.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    dict.push('\n');
    let mut h = b"\x93NUMPY\x01\x00".to_vec();
    h.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    h.extend_from_slice(dict.as_bytes());
    h
}

const LOCAL: u32 = 0x0403_4b50;
const CENTRAL: u32 = 0x0201_4b50;
const END: u32 = 0x0605_4b50;
/// 1980-01-01, the zip epoch, as DOS date.
const DOS_DATE: u16 = 0x21;

/// The zip local header of a stored member `name` of `len` bytes with `crc`.
fn local_header(name: &str, len: u32, crc: u32) -> Vec<u8> {
    let mut h = Vec::with_capacity(30 + name.len());
    h.extend_from_slice(&LOCAL.to_le_bytes());
    h.extend_from_slice(&20u16.to_le_bytes()); // version needed
    h.extend_from_slice(&0u16.to_le_bytes()); // flags
    h.extend_from_slice(&0u16.to_le_bytes()); // stored
    h.extend_from_slice(&0u16.to_le_bytes()); // time
    h.extend_from_slice(&DOS_DATE.to_le_bytes());
    h.extend_from_slice(&crc.to_le_bytes());
    h.extend_from_slice(&len.to_le_bytes());
    h.extend_from_slice(&len.to_le_bytes());
    h.extend_from_slice(&(name.len() as u16).to_le_bytes());
    h.extend_from_slice(&0u16.to_le_bytes()); // extra
    h.extend_from_slice(name.as_bytes());
    h
}

/// The central directory entry of a member written at `offset`.
fn central_entry(name: &str, len: u32, crc: u32, offset: u32) -> Vec<u8> {
    let mut h = Vec::with_capacity(46 + name.len());
    h.extend_from_slice(&CENTRAL.to_le_bytes());
    h.extend_from_slice(&20u16.to_le_bytes()); // made by
    h.extend_from_slice(&local_header(name, len, crc)[4..26]);
    h.extend_from_slice(&(name.len() as u16).to_le_bytes());
    h.extend_from_slice(&[0; 8]); // extra, comment, disk, internal attributes
    h.extend_from_slice(&0u32.to_le_bytes()); // external attributes
    h.extend_from_slice(&offset.to_le_bytes());
    h.extend_from_slice(name.as_bytes());
    h
}

/// The largest file a zip without ZIP64 holds.
pub const NPZ_MAX_BYTES: u64 = u32::MAX as u64 - (1 << 20);

/// Where the samples of a file of `samples` samples of `sample_len` bytes are, in `format` (a TFRecord
/// sample is its whole record: what DLIO's reader reads).
pub fn layout(format: DataFormat, samples: u64, sample_len: u64) -> SampleLayout {
    let x = npy_header(&[samples, sample_len]).len() as u64;
    let data = samples * sample_len;
    match format {
        DataFormat::Npy => SampleLayout { data_offset: x, sample_len, file_len: x + data },
        DataFormat::Tfrecord => {
            let record = crate::tfrecord::record_len(sample_len);
            SampleLayout { data_offset: 0, sample_len: record, file_len: samples * record }
        }
        DataFormat::Npz => {
            let y = npy_header(&[samples]).len() as u64 + samples;
            let members = 30 + 5 + x + data + 30 + 5 + y;
            SampleLayout { data_offset: 30 + 5 + x, sample_len, file_len: members + 2 * (46 + 5) + 22 }
        }
    }
}

/// Writes one file of `samples` samples of `sample_len` random bytes from `rng`; returns its layout.
pub fn write(
    file: &mut File,
    format: DataFormat,
    samples: u64,
    sample_len: u64,
    rng: &mut Rng,
) -> io::Result<SampleLayout> {
    let l = layout(format, samples, sample_len);
    let x_head = npy_header(&[samples, sample_len]);
    let data = samples * sample_len;
    let mut out = io::BufWriter::with_capacity(1 << 20, &mut *file);
    if format == DataFormat::Tfrecord {
        crate::tfrecord::write(&mut out, samples, sample_len, rng)?;
        out.flush()?;
        return Ok(l);
    }
    if format == DataFormat::Npy {
        out.write_all(&x_head)?;
        fill(&mut out, data, rng)?;
        out.flush()?;
        return Ok(l);
    }
    let x_len = u32::try_from(x_head.len() as u64 + data).map_err(|_| too_big())?;
    out.write_all(&local_header("x.npy", x_len, 0))?;
    out.write_all(&x_head)?;
    let mut crc = crc32fast::Hasher::new();
    crc.update(&x_head);
    fill_hashed(&mut out, data, rng, &mut crc)?;
    let x_crc = crc.finalize();
    let y = [npy_header(&[samples]), vec![0u8; samples as usize]].concat();
    let y_crc = crc32fast::hash(&y);
    let y_at = 30 + 5 + x_len;
    out.write_all(&local_header("y.npy", y.len() as u32, y_crc))?;
    out.write_all(&y)?;
    let cd_at = y_at + 30 + 5 + y.len() as u32;
    let cd = [central_entry("x.npy", x_len, x_crc, 0), central_entry("y.npy", y.len() as u32, y_crc, y_at)]
        .concat();
    out.write_all(&cd)?;
    let mut end = END.to_le_bytes().to_vec();
    end.extend_from_slice(&[0; 4]); // disks
    end.extend_from_slice(&2u16.to_le_bytes());
    end.extend_from_slice(&2u16.to_le_bytes());
    end.extend_from_slice(&(cd.len() as u32).to_le_bytes());
    end.extend_from_slice(&cd_at.to_le_bytes());
    end.extend_from_slice(&0u16.to_le_bytes());
    out.write_all(&end)?;
    out.flush()?;
    drop(out);
    // The CRC is known once the data is written: into the local header's field (offset 14).
    file.write_all_at(&x_crc.to_le_bytes(), 14)?;
    debug_assert_eq!(cd_at as u64 + cd.len() as u64 + 22, l.file_len);
    Ok(l)
}

fn too_big() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, "an npz file over 4 GiB (no ZIP64)")
}

fn fill(out: &mut impl Write, n: u64, rng: &mut Rng) -> io::Result<()> {
    fill_with(out, n, rng, |_| {})
}

fn fill_hashed(out: &mut impl Write, n: u64, rng: &mut Rng, crc: &mut crc32fast::Hasher) -> io::Result<()> {
    fill_with(out, n, rng, |b| crc.update(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npy_headers_align_the_data_to_64_bytes() {
        for shape in [&[1u64, 65536][..], &[1251, 114660], &[7]] {
            let h = npy_header(shape);
            assert_eq!(h.len() % 64, 0);
            assert_eq!(h[h.len() - 1], b'\n');
        }
        let h = npy_header(&[7]);
        assert!(String::from_utf8_lossy(&h).contains("'shape': (7,)"));
    }

    #[test]
    fn an_npz_is_a_zip_whose_members_and_crcs_check() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("a.npz");
        let mut f = File::create(&p).unwrap();
        let l = write(&mut f, DataFormat::Npz, 3, 1000, &mut Rng::new(1)).unwrap();
        drop(f);
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!(bytes.len() as u64, l.file_len);
        // The end record points at the central directory, which points at both members.
        let end = &bytes[bytes.len() - 22..];
        assert_eq!(&end[..4], &END.to_le_bytes());
        let cd_at = u32::from_le_bytes(end[16..20].try_into().unwrap()) as usize;
        assert_eq!(&bytes[cd_at..cd_at + 4], &CENTRAL.to_le_bytes());
        let x_len = u32::from_le_bytes(bytes[18..22].try_into().unwrap()) as usize;
        let crc = u32::from_le_bytes(bytes[14..18].try_into().unwrap());
        assert_eq!(crc, crc32fast::hash(&bytes[35..35 + x_len]), "the CRC of x.npy");
        assert_eq!(&bytes[35..41], b"\x93NUMPY");
        assert_eq!(l.data_offset as usize, 35 + npy_header(&[3, 1000]).len());
        // If Python with NumPy is here, it reads the file as DLIO would.
        let py = format!(
            "import numpy as n; d=n.load('{}'); assert d['x'].shape==(3,1000) and d['y'].shape==(3,), d['x'].shape",
            p.display()
        );
        if let Ok(o) = std::process::Command::new("python3").args(["-c", &py]).output() {
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(o.status.success() || err.contains("No module named 'numpy'"), "{err}");
        }
    }
}
