//! The MPI side: [`Ranks`] implements [`iolab_run::RunSync`] with point-to-point messages polled against a
//! deadline (MPI's own collectives cannot be bounded), so every wait ends either with every rank's bytes or
//! with MPI_Abort and a message naming the ranks that did not arrive.

use mpi::environment::Universe;
use mpi::point_to_point::{Destination, MatchedReceiveVec, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::Threading;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

/// Tags of the collectives: one per call, in the same order on every rank, wrapping below MPI's guaranteed
/// upper bound (32767).
const FIRST_TAG: i32 = 100;
const LAST_TAG: i32 = 30_000;
/// The tag of an announcement that the measurement ends (a rank done with `--stonewall`, or rank 0's
/// steady-state decision), outside the collectives' range.
const DONE_TAG: i32 = 31_000;

/// One rank of the job, and what it knows of the others.
pub(crate) struct Ranks {
    /// This rank.
    pub rank: u32,
    /// The number of ranks.
    pub size: u32,
    /// Every rank's host, in rank order.
    hosts: Vec<String>,
    /// The bound on each wait, seconds.
    timeout_s: f64,
    /// The next collective's tag.
    tag: AtomicI32,
    /// `--rate-per-rank` and `--stonewall`.
    options: crate::RankOptions,
}

/// Ends the whole job (every rank) with `code`.
pub(crate) fn abort(code: i32) -> ! {
    SimpleCommunicator::world().abort(code)
}

impl Ranks {
    /// Initialises MPI (threads allowed: the run's own threads never call it) and learns every rank's host.
    pub(crate) fn join(timeout_s: f64, options: crate::RankOptions) -> Option<(Universe, Ranks)> {
        let (universe, _) = mpi::initialize_with_threading(Threading::Serialized)?;
        let world = universe.world();
        let host = mpi::environment::processor_name().unwrap_or_else(|_| "?".into());
        let mut ranks = Ranks {
            rank: world.rank() as u32,
            size: world.size() as u32,
            hosts: (0..world.size()).map(|r| format!("rank {r}")).collect(),
            timeout_s,
            tag: AtomicI32::new(FIRST_TAG),
            options,
        };
        let hosts = ranks.gather("hosts", host.into_bytes());
        ranks.hosts = hosts.into_iter().map(|h| String::from_utf8_lossy(&h).into_owned()).collect();
        Some((universe, ranks))
    }

    /// This rank's host.
    pub(crate) fn host(&self) -> String {
        self.hosts[self.rank as usize].clone()
    }

    /// The allgather: rank 0 collects, then sends everyone everything.
    fn gather(&self, stage: &str, mine: Vec<u8>) -> Vec<Vec<u8>> {
        let tag = self.next_tag();
        let world = SimpleCommunicator::world();
        if self.rank == 0 {
            let all = self.collect(&world, stage, tag, mine);
            let packed = pack(&all);
            for r in 1..self.size {
                world.process_at_rank(r as i32).send_with_tag(&packed[..], tag);
            }
            all
        } else {
            world.process_at_rank(0).send_with_tag(&mine[..], tag);
            let deadline = Instant::now() + Duration::from_secs_f64(self.timeout_s * 2.0 + 5.0);
            let packed = poll(deadline, || world.process_at_rank(0).immediate_matched_probe_with_tag(tag))
                .unwrap_or_else(|| self.give_up(stage, &[0], "did not answer"));
            unpack(&packed.matched_receive_vec::<u8>().0)
        }
    }

    /// Rank 0: every rank's bytes, or MPI_Abort naming the ranks missing at the deadline.
    fn collect(&self, world: &SimpleCommunicator, stage: &str, tag: i32, mine: Vec<u8>) -> Vec<Vec<u8>> {
        let mut all: Vec<Option<Vec<u8>>> = vec![None; self.size as usize];
        all[0] = Some(mine);
        let deadline = Instant::now() + Duration::from_secs_f64(self.timeout_s);
        while all.iter().any(Option::is_none) {
            let got = poll(deadline, || world.any_process().immediate_matched_probe_with_tag(tag));
            let Some(msg) = got else {
                let missing: Vec<u32> = (0..self.size).filter(|&r| all[r as usize].is_none()).collect();
                self.give_up(stage, &missing, "did not arrive");
            };
            let (bytes, status) = msg.matched_receive_vec::<u8>();
            all[status.source_rank() as usize] = Some(bytes);
        }
        all.into_iter().flatten().collect()
    }

    /// Ends the run on every rank, naming the ranks (and hosts) waited for in vain.
    fn give_up(&self, stage: &str, ranks: &[u32], what: &str) -> ! {
        let named: Vec<String> =
            ranks.iter().map(|&r| format!("rank {r} (host {})", self.hosts[r as usize])).collect();
        eprintln!(
            "error: {} {what} at '{stage}' within {} s (rank {} waited; IOLAB_MPI_TIMEOUT sets the bound): \
             ending the run on every rank",
            // Host names come from the other hosts' MPI: escaped as every line iolab prints.
            iolab_report::escape_control(&named.join(", ")),
            self.timeout_s,
            self.rank
        );
        abort(2)
    }

    fn next_tag(&self) -> i32 {
        let t = self.tag.fetch_add(1, Ordering::Relaxed);
        if t >= LAST_TAG {
            self.tag.store(FIRST_TAG + 1, Ordering::Relaxed);
            return FIRST_TAG;
        }
        t
    }
}

impl iolab_run::RunSync for Ranks {
    fn rank(&self) -> u32 {
        self.rank
    }

    fn size(&self) -> u32 {
        self.size
    }

    fn host(&self) -> String {
        Ranks::host(self)
    }

    fn allgather(&self, stage: &str, mine: Vec<u8>) -> Vec<Vec<u8>> {
        self.gather(stage, mine)
    }

    fn rate_per_rank(&self) -> bool {
        self.options.rate_per_rank
    }

    fn stonewall(&self) -> bool {
        self.options.stonewall
    }

    fn announce_done(&self) {
        let world = SimpleCommunicator::world();
        for r in (0..self.size).filter(|&r| r != self.rank) {
            world.process_at_rank(r as i32).send_with_tag(&[1u8][..], DONE_TAG);
        }
    }

    fn other_done(&self) -> bool {
        SimpleCommunicator::world().any_process().immediate_probe_with_tag(DONE_TAG).is_some()
    }

    fn drain_done(&self, messages: u32) {
        let world = SimpleCommunicator::world();
        for _ in 0..messages {
            let _ = world.any_process().receive_vec_with_tag::<u8>(DONE_TAG);
        }
    }
}

/// Calls `probe` until it finds something or `deadline` passes: spinning for the first milliseconds (a
/// collective that all ranks reach together ends in microseconds), then every 200 µs.
fn poll<T>(deadline: Instant, mut probe: impl FnMut() -> Option<T>) -> Option<T> {
    let spin_until = Instant::now() + Duration::from_millis(2);
    loop {
        if let Some(v) = probe() {
            return Some(v);
        }
        let now = Instant::now();
        if now >= deadline {
            return None;
        }
        if now < spin_until {
            std::thread::yield_now();
        } else {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

/// Every rank's bytes in one message: a count, then each length (u64, big-endian) and its bytes.
fn pack(all: &[Vec<u8>]) -> Vec<u8> {
    let mut out = (all.len() as u64).to_be_bytes().to_vec();
    for b in all {
        out.extend_from_slice(&(b.len() as u64).to_be_bytes());
        out.extend_from_slice(b);
    }
    out
}

/// Inverse of [`pack`].
fn unpack(mut bytes: &[u8]) -> Vec<Vec<u8>> {
    let take_u64 = |b: &mut &[u8]| {
        let (head, rest) = b.split_at(8.min(b.len()));
        *b = rest;
        head.try_into().map(u64::from_be_bytes).unwrap_or(0) as usize
    };
    let n = take_u64(&mut bytes);
    let mut all = Vec::with_capacity(n);
    for _ in 0..n {
        let len = take_u64(&mut bytes).min(bytes.len());
        let (b, rest) = bytes.split_at(len);
        all.push(b.to_vec());
        bytes = rest;
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_bytes_unpack_to_themselves() {
        let all = vec![b"abc".to_vec(), Vec::new(), vec![0u8; 1000]];
        assert_eq!(unpack(&pack(&all)), all);
    }
}
