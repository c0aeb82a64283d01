//! The timing of a full-duplex storage link (`link:`): a FIFO pipe per direction at the payload bandwidth,
//! plus a fixed latency per command.

use iolab_spec::LinkParams;

/// One link's state: when each direction is next free.
#[derive(Clone, Debug)]
pub struct LinkTiming {
    params: LinkParams,
}

impl LinkTiming {
    /// A link with both directions idle.
    pub fn new(params: &LinkParams) -> LinkTiming {
        LinkTiming { params: params.clone() }
    }

    /// A command leaves the host at `now_ns`; returns when it reaches the device: a write's payload crosses
    /// the outbound pipe (queued behind earlier transfers), then the command latency.
    pub fn to_device(&mut self, now_ns: u64, write: bool, len: u32) -> u64 {
        let _ = (now_ns, write, len, &self.params);
        todo!()
    }

    /// The device finished at `done_ns`; returns when the host sees the completion: a read's payload crosses
    /// the inbound pipe (queued behind earlier transfers).
    pub fn to_host(&mut self, done_ns: u64, write: bool, len: u32) -> u64 {
        let _ = (done_ns, write, len);
        todo!()
    }
}
