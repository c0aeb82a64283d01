//! The base engines: each issues I/O itself, to a file or device ([`uring`], [`sync`]), to RAM or nowhere
//! ([`mem`]: `mem:` and `null:`), or to an emulated device's model ([`sim`]). A run's stack has exactly one,
//! at the bottom, under the [`layers`](crate::layer) it asks for.

pub mod mem;
pub mod sim;
pub mod sync;
pub mod uring;
