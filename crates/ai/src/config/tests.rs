//! DLIO's own workload files (tests/fixtures/dlio, Apache-2.0) read as DLIO reads them, or refused by name.

use super::*;

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/dlio/dlio_{name}.yaml", env!("CARGO_MANIFEST_DIR"))
}

fn refused(config: &str, params: &[&str]) -> String {
    let params: Vec<String> = params.iter().map(|p| p.to_string()).collect();
    load(config, &params).unwrap_err().0
}

#[test]
fn dlio_unet3d_reads_as_dlio_sets_it_once_its_checkpoint_is_off() {
    let l = load(&fixture("unet3d_h100"), &["workflow.checkpoint=False".into()]).unwrap();
    let c = &l.config;
    assert_eq!(c.name, "unet3d");
    assert_eq!((c.format, c.num_files, c.samples_per_file), (DataFormat::Npz, 168, 1));
    assert_eq!((c.record_length, c.record_stdev), (146_600_628, 68_341_808));
    assert_eq!((c.batch_size, c.read_threads, c.epochs), (7, 4, 5));
    assert_eq!((c.file_shuffle, c.sample_shuffle), (Shuffle::Seed, Shuffle::Seed));
    assert_eq!(c.computation_s, 0.323);
    assert_eq!(c.min_au, Some(0.90));
    let ignored: Vec<&str> = l.ignored.iter().map(|i| i.key.as_str()).collect();
    for k in [
        "framework",
        "reader.data_loader",
        "dataset.data_folder",
        "model.model_size",
        "checkpoint.checkpoint_folder",
    ] {
        assert!(ignored.contains(&k), "{k} in {ignored:?}");
    }
}

#[test]
fn a_checkpoint_inside_the_epochs_run_is_refused_by_name() {
    let e = refused(&fixture("unet3d_h100"), &[]);
    assert!(
        e.starts_with("workflow.checkpoint: 'True': a checkpoint falls after epoch 5 of the 5 epochs run"),
        "{e}"
    );
    assert!(e.contains("--param workflow.checkpoint=False"), "{e}");
    // One epoch of unet3d never reaches epoch 5's checkpoint: it runs.
    assert!(load(&fixture("unet3d_h100"), &["train.epochs=1".into()]).is_ok());
}

#[test]
fn tfrecord_workloads_read_as_written_and_formats_iolab_does_not_write_are_refused_by_name() {
    let l = load(&fixture("resnet50_h100"), &[]).unwrap();
    assert_eq!(
        (l.config.format, l.config.record_length),
        (DataFormat::Tfrecord, 114_660),
        "114660.07 rounded"
    );
    assert_eq!(l.config.transfer_size, None, "TensorFlow's default buffer");
    // cosmoflow: the same, and its TensorFlow shuffle buffer is ignored with why.
    let l = load(&fixture("cosmoflow_h100"), &[]).unwrap();
    assert!(l.ignored.iter().any(|i| i.key == "reader.shuffle_size"));
    let l = load(&fixture("resnet50_h100"), &["reader.transfer_size=1048576".into()]).unwrap();
    assert_eq!(l.config.transfer_size, Some(1 << 20));
    // On a format read by sample index, the transfer size changes nothing: ignored, with why.
    let l = load("unet3d", &["reader.transfer_size=262144".into()]).unwrap();
    assert_eq!(l.config.transfer_size, None);
    assert!(l.ignored.iter().any(|i| i.key == "reader.transfer_size" && i.why.contains("TFRecord")));
    let e = refused("tiny", &["dataset.format=hdf5"]);
    assert!(
        e.starts_with(
            "dataset.format: 'hdf5' (--param dataset.format=hdf5): iolab writes npz, npy and tfrecord"
        ),
        "{e}"
    );
}

#[test]
fn options_that_change_the_io_are_refused_by_name() {
    let e = refused(&fixture("bert_v100"), &["dataset.format=npz", "workflow.checkpoint=False"]);
    assert!(
        e.starts_with(
            "train.total_training_steps: '1000' (line 24 of dlio_bert_v100.yaml): it changes the I/O"
        ),
        "{e}"
    );
    let e = refused(&fixture("default"), &[]);
    assert!(
        e.starts_with("workflow.evaluation: 'True' (line 9 of dlio_default.yaml): evaluation is not run"),
        "{e}"
    );
    let e = refused(&fixture("llama_8b_zero3"), &[]);
    assert!(e.starts_with("workflow.train: 'False'"), "{e}");
    let e = refused("tiny", &["reader.read_type=memory"]);
    assert_eq!(e, "reader.read_type: 'memory' (--param reader.read_type=memory): iolab reads on demand; expected on_demand");
    let e = refused("tiny", &["reader.turbo=1"]);
    assert!(e.contains("not an option of DLIO's workload files that iolab knows"), "{e}");
}

#[test]
fn params_override_the_file_and_bad_values_are_quoted() {
    let l =
        load("unet3d", &["dataset.num_files_train=64".into(), "++workload.train.epochs=1".into()]).unwrap();
    assert_eq!((l.config.num_files, l.config.epochs, l.config.source.as_str()), (64, 1, "built-in unet3d"));
    assert_eq!(
        refused("tiny", &["reader.batch_size=0"]),
        "reader.batch_size: '0' (--param reader.batch_size=0): expected a whole number in 1..=1048576"
    );
    assert!(refused("tiny", &["batch"]).contains("expected KEY=VALUE"));
    assert!(refused("nope", &[]).contains("invalid value 'nope' for 'CONFIG': not a file, nor a built-in workload (tiny, unet3d, resnet50, cosmoflow)"));
}

#[test]
fn every_builtin_reads_and_names_its_minimum_au() {
    for (name, min) in [("tiny", 0.90), ("unet3d", 0.90), ("resnet50", 0.90), ("cosmoflow", 0.70)] {
        let l = load(name, &[]).unwrap();
        assert_eq!((l.config.name.as_str(), l.config.min_au), (name, Some(min)));
        assert!(l.ignored.iter().all(|i| i.key != "dataset.format"));
    }
}

/// Every workload file of DLIO's and MLPerf Storage's (tests/fixtures/dlio) either reads or is refused by
/// name: a key and its value, never a parse error or an unknown key.
#[test]
fn every_dlio_and_mlperf_storage_workload_file_reads_or_is_refused_by_name() {
    let dir = format!("{}/tests/fixtures/dlio", env!("CARGO_MANIFEST_DIR"));
    let mut runs = Vec::new();
    for f in std::fs::read_dir(dir).unwrap() {
        let p = f.unwrap().path();
        if p.extension().is_none_or(|e| e != "yaml") {
            continue;
        }
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        match load(&p.display().to_string(), &[]) {
            Ok(_) => runs.push(name),
            Err(e) => {
                assert!(e.0.contains(": '") && !e.0.contains("not an option of DLIO"), "{name}: {}", e.0)
            }
        }
    }
    // As they are, the resnet50 and cosmoflow files (TFRecord) run; the others are refused by name: the
    // unet3d files checkpoint after their last epoch, the others read other formats, evaluate, stop after
    // a number of steps (bert), only generate data or are checkpoint workloads (llama).
    runs.sort();
    let expected: Vec<String> = [
        "dlio_cosmoflow_a100.yaml",
        "dlio_cosmoflow_h100.yaml",
        "dlio_cosmoflow_v100.yaml",
        "dlio_resnet50_a100.yaml",
        "dlio_resnet50_h100.yaml",
        "dlio_resnet50_tf.yaml",
        "dlio_resnet50_v100.yaml",
        "mlc_cosmoflow_a100.yaml",
        "mlc_cosmoflow_h100.yaml",
        "mlc_resnet50_a100.yaml",
        "mlc_resnet50_h100.yaml",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(runs, expected);
}
