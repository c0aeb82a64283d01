//! Every format iolab reads: recognised by content, read record by record, bad records counted with their
//! line or record number, never a panic.

use iolab_trace::binary::TraceClock;
use iolab_trace::{open_reader, Format, Trace, TraceHeader, TraceOp, TraceRecord, TraceWriter};

fn read_all(bytes: Vec<u8>) -> (Trace, Vec<TraceRecord>) {
    let mut t = open_reader(std::io::Cursor::new(bytes), "test").expect("recognised");
    let mut out = Vec::new();
    while let Some(r) = t.next_record().expect("readable") {
        out.push(r);
    }
    (t, out)
}

fn bad_lines(t: &Trace) -> Vec<u64> {
    t.bad.first.iter().map(|b| b.line_or_record).collect()
}

#[test]
fn cloudphysics_csv() {
    let text = "version,time,op,size,lbn\n1,100,28,4096,8\n1,101,2a,512,16\n1,102,zz,512,16\n1,103,28,512\n1,104,35,0,0\n";
    let (t, r) = read_all(text.into());
    assert_eq!(t.format(), Format::CloudPhysics);
    assert_eq!(r.len(), 3);
    assert_eq!((r[0].op, r[0].offset, r[0].len, r[0].start_ns), (TraceOp::Read, 4096, 4096, 0));
    assert_eq!((r[1].op, r[1].start_ns), (TraceOp::Write, 1_000_000_000));
    assert_eq!(r[2].op, TraceOp::Flush);
    assert_eq!(bad_lines(&t), [4, 5]);
    assert!(t.bad.first[0].reason.contains("\"zz\""), "{:?}", t.bad.first[0]);
}

#[test]
fn msr_cambridge_csv() {
    let text = "128166372003061629,hm,1,Read,383496192,32768,1331\n128166372016382155,hm,1,Write,3216,4096,2000\n128166372016382155,hm,0,Trim,0,4096,1\nbroken\n128166372016382156,web,2,Read,x,4096,1\n";
    let (t, r) = read_all(text.into());
    assert_eq!(t.format(), Format::Msr);
    assert_eq!(r.len(), 2);
    assert_eq!(
        (r[0].op, r[0].offset, r[0].len, r[0].complete_ns),
        (TraceOp::Read, 383496192, 32768, Some(133_100))
    );
    assert_eq!(r[1].start_ns, (128166372016382155 - 128166372003061629) * 100);
    assert_eq!(t.targets(), ["hm/1"]);
    assert_eq!(bad_lines(&t), [3, 4, 5]);
}

#[test]
fn fio_iolog_v2_and_v3() {
    let v2 = "fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n/dev/sdb read 0 4096\n/dev/sdb wait 1500\n/dev/sdb write 8192 512\n/dev/sdb sync\n/dev/sdb read 4096\n/dev/sdb jump 1 1\n/dev/sdb close\n";
    let (t, r) = read_all(v2.into());
    assert_eq!(t.format(), Format::FioLog(2));
    assert_eq!(r.len(), 3);
    // fio 3.33 sleeps until `wait N` is N milliseconds since the job started (not N microseconds more).
    assert_eq!((r[1].op, r[1].offset, r[1].start_ns), (TraceOp::Write, 8192, 1_500_000_000));
    assert_eq!(r[2].op, TraceOp::Flush);
    assert_eq!(bad_lines(&t), [8, 9]);
    assert_eq!(t.passed_over(), 4);
    let v3 = "fio version 3 iolog\n0 f add\n2 f open\n10 f trim 0 4096\n25 f read 4096 4096\nx f read 0 1\n";
    let (t, r) = read_all(v3.into());
    assert_eq!(t.format(), Format::FioLog(3));
    assert_eq!((r[0].op, r[1].start_ns), (TraceOp::Discard, 25_000));
    assert_eq!(bad_lines(&t), [6]);
}

#[test]
fn fio_iolog_v2_wait_is_absolute_milliseconds_as_fio_runs_it() {
    // fio 3.33's iolog.c: a wait entry sleeps `(delay - mtime_since_genesis()) * 1000` us when the delay is
    // ahead, and not at all when the job is already past it: absolute milliseconds, never backwards.
    let v2 = "fio version 2 iolog\nf add\nf open\nf wait 2\nf read 0 4096\nf wait 5\nf read 4096 4096\nf wait 3\nf write 0 512\n";
    let (_, r) = read_all(v2.into());
    let starts: Vec<u64> = r.iter().map(|r| r.start_ns).collect();
    assert_eq!(starts, [2_000_000, 5_000_000, 5_000_000]);
}

#[test]
fn blkparse_text() {
    let text = "  8,0    3        1     0.000000000   697  Q  WS 223490 + 8 [kjournald]\n  8,0    3        2     0.000001000   697  D  WS 223490 + 8 [kjournald]\n  8,16   0        3     0.000500000   697  D   R 100 + 16 [fio]\n  8,16   0        4     0.000600000   697  D FWFS [jbd2]\ngarbage line here\n  8,0    0        5     0.1000   0  C  WS 223490 + 8 [0]\nCPU0 (8,0):\n Reads Queued:           0,        0KiB\n";
    let (t, r) = read_all(text.into());
    assert_eq!(t.format(), Format::Blkparse);
    assert_eq!(r.len(), 3);
    assert_eq!((r[0].op, r[0].offset, r[0].len), (TraceOp::Write, 223490 * 512, 4096));
    // Times count from the first issue; its completion (line 6) gives the response time and result.
    assert_eq!((r[0].start_ns, r[0].complete_ns, r[0].result), (0, Some(99_999_000), Some(4096)));
    assert_eq!(r[1].complete_ns, None);
    assert_eq!((r[1].op, r[1].target, r[1].start_ns), (TraceOp::Read, 1, 499_000));
    assert_eq!(t.passed_over(), 2, "the Q and the C");
    assert_eq!(r[2].op, TraceOp::Write, "FWFS: a flush with write data");
    assert_eq!(t.targets(), ["8,0", "8,16"]);
    assert_eq!(bad_lines(&t), [5]);
}

/// One `struct blk_io_trace` in the given byte order.
fn blk_event(little: bool, time: u64, sector: u64, bytes: u32, action: u32, pdu: &[u8]) -> Vec<u8> {
    let mut e = Vec::new();
    let w32 = |v: u32| if little { v.to_le_bytes() } else { v.to_be_bytes() };
    let w64 = |v: u64| if little { v.to_le_bytes() } else { v.to_be_bytes() };
    let w16 = |v: u16| if little { v.to_le_bytes() } else { v.to_be_bytes() };
    e.extend(w32(0x6561_7407));
    e.extend(w32(1));
    e.extend(w64(time));
    e.extend(w64(sector));
    e.extend(w32(bytes));
    e.extend(w32(action));
    e.extend(w32(42)); // pid
    e.extend(w32(8 << 20 | 16)); // device 8,16
    e.extend(w32(0)); // cpu
    e.extend(w16(0)); // error
    e.extend(w16(pdu.len() as u16));
    e.extend(pdu);
    e
}

#[test]
fn blktrace_binary_in_both_byte_orders() {
    const QUEUE: u32 = 1;
    const ISSUE: u32 = 7;
    const COMPLETE: u32 = 8;
    const READ: u32 = 1 << 16;
    const WRITE: u32 = 2 << 16;
    for little in [true, false] {
        let mut bytes = blk_event(little, 1000, 8, 4096, ISSUE | WRITE, &[1, 2, 3]);
        bytes.extend(blk_event(little, 1500, 64, 4096, QUEUE | READ, &[]));
        bytes.extend(blk_event(little, 2000, 64, 8192, ISSUE | READ, &[]));
        bytes.extend(blk_event(little, 2600, 64, 8192, COMPLETE | READ, &[]));
        bytes.extend(&[0x65, 0x61, 0x74][..]); // a cut-short last event
        let (t, r) = read_all(bytes);
        assert_eq!(t.format(), Format::Blktrace(little));
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].op, r[0].offset, r[0].start_ns), (TraceOp::Write, 4096, 0));
        assert_eq!((r[1].op, r[1].len, r[1].start_ns), (TraceOp::Read, 8192, 1000));
        assert_eq!((r[1].complete_ns, r[1].result, r[0].complete_ns), (Some(1600), Some(8192), None));
        assert_eq!(t.targets(), ["8,16"]);
        assert_eq!(t.passed_over(), 2);
        assert_eq!(bad_lines(&t), [4]);
    }
}

#[test]
fn iolab_binary_round_trip_and_a_torn_tail() {
    let header = TraceHeader {
        clock: TraceClock::Monotonic,
        clock_origin_unix_ns: 7,
        targets: vec!["mem:1G".into(), "b".into()],
    };
    let mut w = TraceWriter::new(Vec::new(), &header).unwrap();
    let mut rec = TraceRecord::new(10, TraceOp::Write, 1, 4096, 512);
    rec.submit_ns = Some(12);
    rec.complete_ns = Some(99);
    rec.result = Some(-5);
    rec.worker = 3;
    w.write(&rec).unwrap();
    w.write(&TraceRecord::new(20, TraceOp::Read, 0, 0, 4096)).unwrap();
    let (mut bytes, n) = w.finish().unwrap();
    assert_eq!(n, 2);
    let mut bad = bytes.clone();
    bad[bytes.len() - 48 + 42] = 9; // an unknown op code in record 1
    bytes.extend(&[1, 2, 3]);
    let (t, r) = read_all(bytes);
    assert_eq!(t.format(), Format::Iolab);
    assert_eq!(t.header(), header);
    assert_eq!(r[0], rec);
    assert_eq!(r.len(), 2);
    assert_eq!(bad_lines(&t), [2]);
    let (t, r) = read_all(bad);
    assert_eq!((r.len(), bad_lines(&t)), (1, vec![1]));
}

#[test]
fn iolab_binary_in_batches_reads_what_one_by_one_reads_across_chunks() {
    // Records over several of the reader's chunks, two of them bad (an unknown op, a target the header does
    // not name) and the last one torn: batches of any size give the same records and bad records.
    let n = 2 * iolab_trace::TraceReader::<std::fs::File>::CHUNK_RECORDS as u64 + 100;
    let header = TraceHeader { targets: vec!["a".into(), "b".into()], ..TraceHeader::default() };
    let mut w = TraceWriter::new(Vec::new(), &header).unwrap();
    for i in 0..n {
        w.write(&TraceRecord::new(i, TraceOp::Read, (i % 2) as u16, i * 4096, 4096)).unwrap();
    }
    let (mut bytes, _) = w.finish().unwrap();
    let records_at = bytes.len() - 48 * n as usize;
    bytes[records_at + 48 * 4095 + 42] = 7;
    bytes[records_at + 48 * 5000 + 40] = 2;
    bytes.extend(&[0; 20]);
    let (one_by_one, want) = read_all(bytes.clone());
    assert_eq!((want.len() as u64, bad_lines(&one_by_one)), (n - 2, vec![4095, 5000, n]));
    for batch in [1, 7, 1024, 10_000] {
        let mut t = open_reader(std::io::Cursor::new(bytes.clone()), "test").unwrap();
        let (mut got, mut b) = (Vec::new(), Vec::with_capacity(batch));
        loop {
            t.next_batch(&mut b).unwrap();
            if b.is_empty() {
                break;
            }
            got.extend_from_slice(&b);
        }
        assert_eq!(got, want, "batches of {batch}");
        assert_eq!(t.bad, one_by_one.bad, "batches of {batch}");
    }
}

#[test]
fn iolab_csv_round_trip() {
    let mut text = String::from(iolab_trace::csv::HEADER);
    text.push('\n');
    let mut rec = TraceRecord::new(5, TraceOp::Discard, 0, 1 << 20, 65536);
    rec.complete_ns = Some(50);
    iolab_trace::csv::write_line(&mut text, &rec, &["8,0".to_string()]);
    text.push_str("1,,,read,0,4096,,0\n");
    let (t, r) = read_all(text.into());
    assert_eq!(t.format(), Format::IolabCsv);
    assert_eq!(r, [rec]);
    assert_eq!(t.targets(), ["8,0"]);
    assert_eq!(bad_lines(&t), [3]);
}

#[test]
fn unknown_content_is_refused_with_its_first_line() {
    let err = open_reader(std::io::Cursor::new(b"hello world\n".to_vec()), "x.txt").err().unwrap();
    assert!(err.to_string().contains("\"hello world\""), "{err}");
    let err = open_reader(std::io::Cursor::new(Vec::new()), "e").err().unwrap();
    assert!(err.to_string().contains("empty"), "{err}");
}

#[test]
fn a_bad_iolab_header_is_refused() {
    let mut bytes = b"iolabtrc".to_vec();
    bytes.extend([9, 0, 48, 0, 32, 0, 0, 0]);
    bytes.resize(32, 0);
    let err = open_reader(std::io::Cursor::new(bytes), "v9").err().unwrap();
    assert!(err.to_string().contains("version 9"), "{err}");
}

/// Random bytes and random text after each format's first line: every record is good or bad, never a panic.
#[test]
fn garbage_never_panics() {
    let firsts: [&[u8]; 7] = [
        b"version,time,op,size,lbn\n",
        b"1,2,hm,0,Read,0,1\n",
        b"fio version 2 iolog\n",
        b"fio version 3 iolog\n",
        b"8,0 0 1 0.000000001 1 D R 0 + 8 [x]\n",
        b"\x07\x74\x61\x65",
        b"iolabtrc\x01\x00\x30\x00\x20\x00\x00\x00",
    ];
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut byte = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x as u8
    };
    let alphabet = b"0123456789,. +-[]RWDFSQabcdefxyz\n";
    for first in firsts {
        for round in 0..50 {
            let mut bytes = first.to_vec();
            if first.starts_with(b"iolabtrc") {
                bytes.resize(32, 0);
            }
            for _ in 0..2000 {
                let b = byte();
                bytes.push(if round % 2 == 0 { alphabet[b as usize % alphabet.len()] } else { b });
            }
            let Ok(mut t) = open_reader(std::io::Cursor::new(bytes), "garbage") else { continue };
            while let Ok(Some(_)) = t.next_record() {}
        }
    }
}

#[test]
fn blkparse_issues_never_completed_all_come_out_in_order() {
    let mut text = String::new();
    for i in 0..5000u64 {
        text.push_str(&format!("8,0 0 {i} 0.{:09} 1 D R {} + 8 [x]\n", i * 1000, i * 8));
    }
    text.push_str("8,0 0 9999 1.0 1 C R 39992 + 8 [0]\n");
    let (_, r) = read_all(text.into());
    assert_eq!(r.len(), 5000);
    assert!(r.iter().enumerate().all(|(i, r)| r.offset == i as u64 * 4096));
    assert_eq!(r[4999].complete_ns, Some(1_000_000_000), "the last one's completion came after the window");
}

/// An iolab trace header: `count` targets in `names` (each a u16 length and its bytes), `header_len` as stated.
fn header(count: u32, names: &[u8], header_len: u32) -> Vec<u8> {
    let mut b = b"iolabtrc".to_vec();
    b.extend_from_slice(&1u16.to_le_bytes());
    b.extend_from_slice(&48u16.to_le_bytes());
    b.extend_from_slice(&header_len.to_le_bytes());
    b.extend_from_slice(&0u64.to_le_bytes());
    b.extend_from_slice(&0u32.to_le_bytes());
    b.extend_from_slice(&count.to_le_bytes());
    b.extend_from_slice(names);
    b.resize(header_len as usize, 0);
    b
}

fn refused(bytes: Vec<u8>) -> String {
    match open_reader(std::io::Cursor::new(bytes), "h.trace") {
        Ok(_) => panic!("accepted"),
        Err(e) => e.to_string(),
    }
}

/// Issue 24, item 8: a header naming 33M empty targets made `trace show` use 3.1 GB. The count, each name's
/// length and the header's size are bounded before anything is allocated for them.
#[test]
fn an_iolab_header_is_bounded_before_it_is_read() {
    let e = refused(header(33_000_000, &[], 32 + 66_000_000));
    assert!(e.contains("header length 66000032 out of range") && e.contains("32 to 16777216 bytes"), "{e}");
    let e = refused(header(8_000_000, &[], 16 << 20));
    assert!(e.contains("names 8000000 targets; expected at most 65536"), "{e}");
    let e = refused(header(1000, &[], 1024));
    assert!(e.contains("names 1000 targets") && e.contains("at most 496 in a header of 1024 bytes"), "{e}");
    let mut long = 5000u16.to_le_bytes().to_vec();
    long.resize(2 + 5000, b'a');
    let e = refused(header(1, &long, 32 + 5008));
    assert!(e.contains("target name 0 is 5000 bytes; expected at most 4096"), "{e}");
    let (t, r) = read_all(header(65_536, &[], 32 + 2 * 65_536));
    assert_eq!((t.targets().len(), r.len()), (65_536, 0), "the most a record can index are read");
    let names: Vec<String> = vec![String::new(); 65_537];
    let h = TraceHeader { targets: names, ..TraceHeader::default() };
    let e = TraceWriter::new(Vec::new(), &h).err().expect("refused").to_string();
    assert!(e.contains("65537 targets"), "{e}");
}

/// A text trace's line is bounded: a file of one endless line is refused, never read whole.
#[test]
fn a_text_trace_line_is_bounded() {
    let mut text = b"1,100,28,4096,8\n".to_vec();
    text.extend(std::iter::repeat_n(b'1', 1 << 20));
    let mut t = open_reader(std::io::Cursor::new(text), "long.csv").expect("recognised");
    let mut err = None;
    while err.is_none() {
        match t.next_record() {
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(e) => err = Some(e.to_string()),
        }
    }
    let e = err.expect("refused");
    assert!(e.contains("line 2 is longer than 65536 bytes"), "{e}");
}

/// Issue 24, item 13: numbers read from a trace are added and multiplied with checked arithmetic; the bad
/// record quotes the value read, never a wrapped or saturated one.
#[test]
fn overflowing_numbers_are_bad_records_quoting_the_value() {
    let text = "  8,0    3        1     0.000000000   697  D  WS 223490 + 8 [a]\n  8,0    3        2     0.000001000   697  D  WS 0 + 36028797018963968 [a]\n";
    let (t, r) = read_all(text.into());
    assert_eq!((t.format(), r.len()), (Format::Blkparse, 1));
    assert!(t.bad.first[0].reason.contains("sector count 36028797018963968"), "{:?}", t.bad.first);
    let log = "fio version 2 iolog\n/dev/sdb add\n/dev/sdb wait 18446744073709551615\n/dev/sdb wait 2\n/dev/sdb read 0 4096\n";
    let (t, _) = read_all(log.into());
    assert!(
        t.bad.first.iter().any(|b| b.reason.contains("wait time 18446744073709551615 ms")),
        "{:?}",
        t.bad.first
    );
}
