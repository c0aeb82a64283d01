//! TFRecord files as DLIO's TFRecord generator writes them (`tf.io.TFRecordWriter`): each sample one record,
//! `length` (u64, little-endian), the masked CRC-32C of those 8 bytes, the data, the masked CRC-32C of the
//! data; the data a serialized `tf.train.Example` with two features, `image` (the sample's bytes) and `size`
//! (their count), as DLIO puts them. Every record of a file has the same length, so record `i` is at
//! `i × record length`. DLIO's reader (`tf.data.TFRecordDataset`) reads whole records, so iolab's sample
//! read is the record, framing included. DLIO also writes DALI's index files beside the data
//! (`index/train/*.idx`); its TensorFlow reader never reads them, and iolab does not write them.

use iolab_rng::Rng;
use std::io::{self, Write};

/// The masked CRC-32C TFRecord stores: the CRC rotated right by 15 bits, plus a constant.
pub fn masked_crc(data: &[u8]) -> u32 {
    mask(crc32c::crc32c(data))
}

fn mask(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(0xa282_ead8)
}

/// Appends `v` as a protobuf varint.
fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A length-delimited protobuf field `tag` whose payload is `len` bytes (the payload itself not included).
fn field_head(out: &mut Vec<u8>, tag: u8, len: u64) {
    out.push(tag);
    varint(out, len);
}

fn varint_len(v: u64) -> u64 {
    (64 - (v | 1).leading_zeros() as u64).div_ceil(7)
}

/// What comes before and after the sample's bytes in the serialized `Example` of a sample of `len` bytes:
/// `Example { features: Features { feature: { "image": bytes_list [sample], "size": int64_list [len] } } }`.
fn example_around(len: u64) -> (Vec<u8>, Vec<u8>) {
    let bytes_list = 1 + varint_len(len) + len;
    let image_feature = 1 + varint_len(bytes_list) + bytes_list;
    let image_entry = 1 + 1 + 5 + 1 + varint_len(image_feature) + image_feature;
    let mut size_entry = Vec::new();
    let packed = varint_len(len);
    let int64_list = 1 + varint_len(packed) + packed;
    let size_feature = 1 + varint_len(int64_list) + int64_list;
    size_entry.push(0x0a);
    size_entry.push(4);
    size_entry.extend_from_slice(b"size");
    field_head(&mut size_entry, 0x12, size_feature);
    field_head(&mut size_entry, 0x1a, int64_list);
    field_head(&mut size_entry, 0x0a, packed);
    varint(&mut size_entry, len);
    let features = 1
        + varint_len(image_entry)
        + image_entry
        + 1
        + varint_len(size_entry.len() as u64)
        + size_entry.len() as u64;
    let mut before = Vec::new();
    field_head(&mut before, 0x0a, features); // Example.features
    field_head(&mut before, 0x0a, image_entry); // Features.feature (map entry)
    field_head(&mut before, 0x0a, 5); // key
    before.extend_from_slice(b"image");
    field_head(&mut before, 0x12, image_feature); // value: Feature
    field_head(&mut before, 0x0a, bytes_list); // Feature.bytes_list
    field_head(&mut before, 0x0a, len); // BytesList.value
    let mut after = Vec::new();
    field_head(&mut after, 0x0a, size_entry.len() as u64); // Features.feature (map entry)
    after.extend_from_slice(&size_entry);
    (before, after)
}

/// Bytes of one record holding a sample of `len` bytes: the framing, the `Example`, the sample.
pub fn record_len(len: u64) -> u64 {
    let (before, after) = example_around(len);
    8 + 4 + before.len() as u64 + len + after.len() as u64 + 4
}

/// Writes `samples` records of `len` random bytes each from `rng`; the file's size.
pub fn write(out: &mut impl Write, samples: u64, len: u64, rng: &mut Rng) -> io::Result<u64> {
    let (before, after) = example_around(len);
    let data_len = before.len() as u64 + len + after.len() as u64;
    let head = data_len.to_le_bytes();
    for _ in 0..samples {
        out.write_all(&head)?;
        out.write_all(&masked_crc(&head).to_le_bytes())?;
        out.write_all(&before)?;
        let mut crc = crc32c::crc32c(&before);
        crate::fill::fill_with(out, len, rng, |b| crc = crc32c::crc32c_append(crc, b))?;
        crc = crc32c::crc32c_append(crc, &after);
        out.write_all(&after)?;
        out.write_all(&mask(crc).to_le_bytes())?;
    }
    Ok(samples * record_len(len))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A protobuf field: (tag, payload) for length-delimited fields, read from `b` at `*at`.
    fn read_varint(b: &[u8], at: &mut usize) -> u64 {
        let (mut v, mut shift) = (0u64, 0);
        loop {
            let x = b[*at];
            *at += 1;
            v |= u64::from(x & 0x7f) << shift;
            if x < 0x80 {
                return v;
            }
            shift += 7;
        }
    }

    fn fields(b: &[u8]) -> Vec<(u8, &[u8])> {
        let mut at = 0;
        let mut out = Vec::new();
        while at < b.len() {
            let tag = b[at];
            at += 1;
            let len = read_varint(b, &mut at) as usize;
            out.push((tag, &b[at..at + len]));
            at += len;
        }
        out
    }

    #[test]
    fn records_frame_check_and_parse_as_examples_of_image_and_size() {
        for len in [1u64, 127, 128, 16_383, 16_384, 114_660] {
            let mut out = Vec::new();
            let n = write(&mut out, 3, len, &mut Rng::new(len)).unwrap();
            assert_eq!(n, out.len() as u64, "record_len agrees with what is written");
            let rec = record_len(len) as usize;
            for r in out.chunks(rec) {
                let data_len = u64::from_le_bytes(r[..8].try_into().unwrap()) as usize;
                assert_eq!(u32::from_le_bytes(r[8..12].try_into().unwrap()), masked_crc(&r[..8]));
                let data = &r[12..12 + data_len];
                assert_eq!(12 + data_len + 4, rec);
                assert_eq!(u32::from_le_bytes(r[12 + data_len..].try_into().unwrap()), masked_crc(data));
                let example = fields(data);
                assert_eq!(example.len(), 1);
                let entries = fields(example[0].1);
                let map: Vec<(&[u8], &[u8])> = entries
                    .iter()
                    .map(|(_, e)| {
                        let kv = fields(e);
                        (kv[0].1, kv[1].1)
                    })
                    .collect();
                assert_eq!(map[0].0, b"image");
                assert_eq!(fields(fields(map[0].1)[0].1)[0].1.len() as u64, len, "the sample's bytes");
                assert_eq!(map[1].0, b"size");
                let int64_list = fields(map[1].1)[0];
                assert_eq!(int64_list.0, 0x1a, "Feature.int64_list");
                let packed = fields(int64_list.1)[0].1;
                assert_eq!(read_varint(packed, &mut 0), len);
            }
        }
    }

    /// If Python has protobuf's `tfrecord` package and `crc32c`, they parse the file as TensorFlow would:
    /// both CRCs checked, each record a `tf.train.Example` of `image` and `size`.
    #[test]
    fn python_reads_the_records_as_tensorflow_examples() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("a.tfrecord");
        let mut f = std::fs::File::create(&p).unwrap();
        write(&mut f, 3, 1000, &mut Rng::new(3)).unwrap();
        drop(f);
        let py = format!(
            r#"
import struct
import crc32c
from tfrecord import example_pb2
mask = lambda c: (((c >> 15) | (c << 17)) + 0xa282ead8) & 0xffffffff
b = open('{}', 'rb').read()
at = n = 0
while at < len(b):
    (l,) = struct.unpack('<Q', b[at:at + 8])
    assert struct.unpack('<I', b[at + 8:at + 12])[0] == mask(crc32c.crc32c(b[at:at + 8]))
    d = b[at + 12:at + 12 + l]
    assert struct.unpack('<I', b[at + 12 + l:at + 16 + l])[0] == mask(crc32c.crc32c(d))
    e = example_pb2.Example()
    e.ParseFromString(d)
    f = e.features.feature
    assert len(f['image'].bytes_list.value[0]) == 1000 and f['size'].int64_list.value[0] == 1000
    at += 16 + l
    n += 1
assert n == 3
"#,
            p.display()
        );
        if let Ok(o) = std::process::Command::new("python3").args(["-c", &py]).output() {
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(o.status.success() || err.contains("ModuleNotFoundError"), "{err}");
        }
    }
}
