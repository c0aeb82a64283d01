//! The writer API a run records with: several worker threads send batches to one background writer, and
//! every record comes back from the file in each worker's order.

use iolab_trace::binary::TraceClock;
use iolab_trace::{open, BackgroundWriter, TraceHeader, TraceOp, TraceRecord, TraceWriter};

#[test]
fn four_workers_record_through_one_background_writer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.iolabtrace");
    let header =
        TraceHeader { clock: TraceClock::Virtual, clock_origin_unix_ns: 1, targets: vec!["mem:1G".into()] };
    let file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let bg = BackgroundWriter::spawn(TraceWriter::new(file, &header).unwrap(), 256, 4);
    let workers: Vec<_> = (0..4u16)
        .map(|w| {
            let sender = bg.sender();
            std::thread::spawn(move || {
                let mut batch = sender.batch();
                for i in 0..10_000u64 {
                    let mut r = TraceRecord::new(i * 1000, TraceOp::Read, 0, i * 4096, 4096);
                    r.worker = w;
                    r.submit_ns = Some(i * 1000 + 10);
                    r.complete_ns = Some(i * 1000 + 90);
                    r.result = Some(4096);
                    batch.push(r);
                    if batch.len() == batch.capacity() {
                        sender.send(std::mem::replace(&mut batch, sender.batch())).unwrap();
                    }
                }
                sender.send(batch).unwrap();
            })
        })
        .collect();
    workers.into_iter().for_each(|w| w.join().unwrap());
    assert_eq!(bg.finish().unwrap(), 40_000);

    let mut t = open(path.to_str().unwrap()).unwrap();
    assert_eq!(t.header(), header);
    let mut next = [0u64; 4];
    while let Some(r) = t.next_record().unwrap() {
        let w = r.worker as usize;
        assert_eq!(r.offset, next[w] * 4096, "worker {w}'s records in its order");
        assert_eq!((r.complete_ns, r.result), (Some(next[w] * 1000 + 90), Some(4096)));
        next[w] += 1;
    }
    assert_eq!(next, [10_000; 4]);
    assert_eq!(t.bad.count, 0);
}
