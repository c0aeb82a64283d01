//! End-to-end tests of the `iolab` binary: one test binary, `assert_cmd`, assertions on the
//! JSON result (schema `iolab.result/1`), never on prose. Anything timing-shaped runs on the emulated device
//! with virtual time (`sim:fixed,latency=100us,servers=8 --clock virtual --seed 1`), so it is exact and
//! instant. Real-kernel file tests skip (printing `skipped: <reason>`) when the environment lacks a feature.
//!
//! Exit codes 0, 1 (I/O errors or data mismatches, with `--inject`) and 2 are covered.

mod ai;
mod ai_checkpoint;
mod bad_input;
mod bridge;
mod cache;
mod catalog;
mod compare;
mod db;
mod db_dir;
mod db_everywhere;
mod db_own_io;
mod db_safety;
mod db_storage;
mod db_view;
mod db_ycsb;
mod derive;
mod device_safety;
mod doc_commands;
mod durability;
mod emulation;
mod flags_in_messages;
mod fuzz_args;
mod golden;
mod help;
mod import;
mod install;
mod layout;
mod loadgen;
mod metrics;
mod old_catalog;
mod open_loop;
mod phases;
mod plain_outputs;
mod profiles;
mod progress;
mod replay;
mod report;
mod round2_files;
mod run;
mod safe_by_construction;
mod signals;
mod sweep;
mod trace;
mod util;
mod verify;
mod virtual_time;
mod write_gate;
