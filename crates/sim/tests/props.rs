//! Invariants of every model under arbitrary streams of reads, writes, durable writes, flushes and trims:
//! each request completes exactly once, never before its submission, `advance` returns completions in time
//! order and never after `now`, and `next_event_ns` is never in the past.

mod common;
use iolab_sim::{Done, Model, Request};
use proptest::prelude::*;

const TARGETS: &[&str] = &[
    "sim:fixed,latency=50us,servers=3,size=64M",
    "sim:hdd,7k2,size=64M,ncq=4",
    "sim:hdd,15k,size=1G",
    "sim:ssd,sata,size=64M",
    "sim:ssd,sata,size=64M,wcache_size=64K",
    "sim:hdd,15k,size=1G,wcache=plp,wcache_size=64K",
    "sim:ssd,nvme,size=64M,sigma=1.5,read_bw=50",
    "sim:array,disks=3,stripe=4K,member=hdd:10k:size=16M",
    "sim:array,disks=4,raid=0,stripe=8K,member=ssd:sata:size=16M",
    "sim:array,disks=4,raid=10,stripe=4K,member=hdd:15k:size=16M",
    "sim:array,disks=5,stripe=16K,member=ssd:nvme:size=16M,size=32M",
];

#[derive(Clone, Debug)]
struct Step {
    gap_ns: u64,
    /// 0-3 read, 4-6 write, 7 durable write, 8 flush, 9 trim.
    kind: u8,
    block: u64,
    blocks: u32,
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec(
        (0u64..3_000_000, 0u8..10, 0u64..4096, 0u32..40).prop_map(|(gap_ns, kind, block, blocks)| Step {
            gap_ns,
            kind,
            block,
            blocks,
        }),
        1..120,
    )
}

fn request(kind: u8, tag: u64, offset: u64, len: u32) -> Request {
    match kind {
        0..=3 => Request::read(tag, offset, len),
        4..=6 => Request::write(tag, offset, len),
        7 => Request::durable_write(tag, offset, len),
        8 => Request::flush(tag),
        _ => Request::trim(tag, offset, len),
    }
}

fn check(target: &str, steps: &[Step], link: Option<&str>) -> Result<(), TestCaseError> {
    let text = match link {
        Some(l) => format!("link:{l}:{target}"),
        None => target.to_string(),
    };
    let spec = iolab_spec::TargetSpec::parse(&text).unwrap();
    let size = spec.base().clone();
    let size = match size {
        iolab_spec::TargetSpec::Sim(s) => s.size_bytes(),
        _ => unreachable!(),
    };
    const MAX: usize = 16;
    let mut m = iolab_sim::build_target(&spec, 17, MAX).unwrap();
    let mut submitted: Vec<u64> = Vec::new();
    let mut completed: Vec<Option<u64>> = Vec::new();
    let mut out: Vec<Done> = Vec::new();
    let mut now = 0u64;
    let drain = |m: &mut Box<dyn Model>, now: u64, out: &mut Vec<Done>| -> Result<(), TestCaseError> {
        let from = out.len();
        m.advance(now, out);
        for w in out[from..].windows(2) {
            prop_assert!(w[0].at_ns <= w[1].at_ns, "unsorted: {:?}", w);
        }
        for d in &out[from..] {
            prop_assert!(d.at_ns <= now);
        }
        if let Some(t) = m.next_event_ns() {
            prop_assert!(t > now, "next event {} not after now {}", t, now);
        }
        Ok(())
    };
    for s in steps {
        let next = now + s.gap_ns;
        // Move through every event before the next submission, as an engine on virtual time would.
        while let Some(t) = m.next_event_ns().filter(|&t| t <= next) {
            now = t.max(now);
            drain(&mut m, now, &mut out)?;
        }
        now = next;
        drain(&mut m, now, &mut out)?;
        while m.in_flight() >= MAX {
            now = m.next_event_ns().unwrap().max(now);
            drain(&mut m, now, &mut out)?;
        }
        let len = s.blocks * 512;
        let offset = (s.block * 4096).min(size - len as u64);
        let tag = submitted.len() as u64;
        m.submit(now, request(s.kind, tag, offset, len));
        submitted.push(now);
        completed.push(None);
    }
    while let Some(t) = m.next_event_ns() {
        now = t.max(now);
        drain(&mut m, now, &mut out)?;
    }
    prop_assert_eq!(m.in_flight(), 0);
    for d in &out {
        let i = d.tag as usize;
        prop_assert!(completed[i].is_none(), "tag {} completed twice", i);
        prop_assert!(
            d.at_ns >= submitted[i],
            "tag {} done at {} before submission {}",
            i,
            d.at_ns,
            submitted[i]
        );
        completed[i] = Some(d.at_ns);
    }
    prop_assert!(completed.iter().all(|c| c.is_some()), "a request never completed");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    #[test]
    fn every_request_completes_exactly_once(which in 0..TARGETS.len(), steps in steps()) {
        check(TARGETS[which], &steps, None)?;
    }

    #[test]
    fn every_request_completes_exactly_once_behind_a_link(which in 0..TARGETS.len(), steps in steps(),
                                                          link in prop::sample::select(vec!["fc1g", "fc8g", "10gbe"])) {
        check(TARGETS[which], &steps, Some(link))?;
    }
}
