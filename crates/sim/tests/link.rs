//! A link's bandwidth per direction and full duplex, with a fast device behind it.

use iolab_sim::{Done, Request};

/// Keeps `reads` 64 KiB reads and `writes` 64 KiB writes in flight through `link:PRESET:sim:fixed` and returns
/// the payload rate per direction (read MB/s, write MB/s).
fn duplex(preset: &str, reads: usize, writes: usize) -> (f64, f64) {
    let spec =
        iolab_spec::TargetSpec::parse(&format!("link:{preset}:sim:fixed,latency=20us,servers=256,size=1G"))
            .unwrap();
    let n = reads + writes;
    let mut m = iolab_sim::build_target(&spec, 1, n).unwrap();
    let len = 65536u32;
    let req = |tag: u64| {
        let offset = (tag % 1000) * len as u64;
        if tag as usize >= reads {
            Request::write(tag, offset, len)
        } else {
            Request::read(tag, offset, len)
        }
    };
    for tag in 0..n as u64 {
        m.submit(0, req(tag));
    }
    let mut out: Vec<Done> = Vec::new();
    let (mut rd, mut wr) = (0u64, 0u64);
    let warm = 200_000_000; // 0.2 s
    let end = 1_200_000_000; // then 1 s measured
    loop {
        let t = m.next_event_ns().unwrap();
        if t > end {
            break;
        }
        out.clear();
        m.advance(t, &mut out);
        for d in &out {
            if t > warm {
                if d.tag as usize >= reads {
                    wr += len as u64;
                } else {
                    rd += len as u64;
                }
            }
            m.submit(t, req(d.tag));
        }
    }
    let secs = (end - warm) as f64 / 1e9;
    (rd as f64 / secs / 1e6, wr as f64 / secs / 1e6)
}

#[test]
fn fc4g_carries_400_mb_s_each_way_at_once() {
    let (r, w) = duplex("fc4g", 16, 0);
    assert!((r / 400.0 - 1.0).abs() < 0.02, "reads alone: {r} MB/s");
    let (r, w0) = duplex("fc4g", 0, 16);
    assert_eq!(r, 0.0);
    assert!((w0 / 400.0 - 1.0).abs() < 0.02, "writes alone: {w0} MB/s");
    let _ = w;
    let (r, w) = duplex("fc4g", 16, 16);
    assert!((r / 400.0 - 1.0).abs() < 0.02 && (w / 400.0 - 1.0).abs() < 0.02, "duplex: {r} + {w} MB/s");
}

#[test]
fn every_preset_delivers_its_rate() {
    for p in iolab_spec::sim::LINK_PRESETS {
        let mb_s = iolab_spec::sim::link_preset(p).unwrap().mb_s;
        // Enough in flight to fill the pipe: rate x (latency + device + transfer) / 64K, plus margin.
        let (r, _) = duplex(p, 64, 0);
        assert!((r / mb_s - 1.0).abs() < 0.02, "{p}: {r} vs {mb_s} MB/s");
    }
}

#[test]
fn a_link_adds_latency_and_transfer_to_the_device() {
    let spec = iolab_spec::TargetSpec::parse("link:fc8g:sim:fixed,latency=100us").unwrap();
    let mut m = iolab_sim::build_target(&spec, 1, 4).unwrap();
    m.submit(0, Request::read(1, 0, 8000));
    let mut out = Vec::new();
    let t = m.next_event_ns().unwrap();
    m.advance(t, &mut out);
    while out.is_empty() {
        let t = m.next_event_ns().unwrap();
        m.advance(t, &mut out);
    }
    // 5 us command latency + 100 us device + 8000 B at 800 MB/s = 10 us.
    assert_eq!(out, vec![Done { tag: 1, at_ns: 115_000 }]);
    assert_eq!(m.expected_service_ns(false, 8000), 115_000.0);
}
