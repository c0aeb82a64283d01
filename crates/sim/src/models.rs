//! The device models behind `sim:fixed`, `sim:hdd`, `sim:ssd` and `sim:array`.

use crate::Model;
use iolab_spec::SimSpec;

/// Builds the model for `spec` (see [`crate::build`]).
pub fn build(spec: &SimSpec, seed: u64, max_in_flight: usize) -> Box<dyn Model> {
    let _ = (spec, seed, max_in_flight);
    todo!("device models")
}
