//! What each rank of a checkpoint writes, by DLIO's formulas (dlio_benchmark/checkpointing/
//! base_checkpointing.py, e1919d7: `get_num_parameters`, `get_layer_parameters`, `get_layer_index`,
//! `get_optimization_groups`, `save_checkpoint`), transcribed: the same integer divisions in the same order,
//! so every byte count is DLIO's.
//!
//! A rank is `tensor + TP * (pipeline + PP * data)`. Layers are numbered 0 (the embedding), 1..=L (the
//! transformer layers, dealt to the pipeline stages, the first `L mod PP` stages one more), L + 1 (lm_head)
//! and L + 2 (the final norm's weight); stage 0 has layer 0, the last stage L + 1 and L + 2. ZeRO stage 3
//! shards the model's tensors over the data-parallel ranks; stages 1 and 2 write the model from data-parallel
//! rank 0 only (one file per layer when PP > 1); stage 0 writes from the first TP × PP ranks only. Every
//! writing rank writes its share of the optimizer's state: three groups of `parameters / (DP × TP × PP)`
//! (ZeRO 0: `/ (TP × PP)`) and three of `5 × hidden`, in the optimizer's data type.

/// A transformer as DLIO's `model.*` keys give it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transformer {
    /// `model.num_layers`.
    pub num_layers: u64,
    /// `model.transformer.hidden_size`.
    pub hidden: u64,
    /// `model.transformer.ffn_hidden_size`.
    pub ffn: u64,
    /// `model.transformer.vocab_size`.
    pub vocab: u64,
    /// `model.transformer.num_attention_heads`.
    pub heads: u64,
    /// `model.transformer.num_kv_heads`.
    pub kv_heads: u64,
    /// Bytes of an element of the model (`model.model_datatype`: fp16 is 2).
    pub model_bytes: u64,
    /// Bytes of an element of the optimizer's state (`model.optimizer_datatype`: fp32 is 4).
    pub optimizer_bytes: u64,
}

/// How the model is spread over the ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parallelism {
    /// `model.parallelism.tensor`.
    pub tensor: u64,
    /// `model.parallelism.pipeline`.
    pub pipeline: u64,
    /// Data-parallel instances: `model.parallelism.data` in subset mode, else ranks / (TP × PP).
    pub data: u64,
    /// `model.parallelism.zero_stage`, 0 to 3.
    pub zero_stage: u64,
}

impl Parallelism {
    /// TP × PP.
    pub fn model(&self) -> u64 {
        self.tensor * self.pipeline
    }
}

/// One file of a rank's checkpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardFile {
    /// DLIO's name, in the checkpoint's directory (`zero_pp_rank_0_mp_rank_3_optim_states.pt`).
    pub name: String,
    /// Its bytes (the tensors'; torch.save's container is left out).
    pub bytes: u64,
    /// The model's state (else the optimizer's).
    pub model: bool,
}

impl Transformer {
    /// The model's parameters (`get_num_parameters`).
    pub fn parameters(&self) -> u64 {
        let h = self.hidden;
        let dim_kv = h / self.heads * self.kv_heads;
        let embedding = self.vocab * h;
        let layer = h + h * (h + 2 * dim_kv) + h * h + h + self.ffn * 2 * h + self.ffn * h;
        embedding + layer * self.num_layers + h + embedding
    }

    /// The elements of layer `i` held by one rank (`get_layer_parameters`).
    fn layer_elements(&self, i: u64, p: &Parallelism) -> u64 {
        let (h, tp) = (self.hidden, p.tensor);
        let sf = if p.zero_stage < 3 { 1 } else { p.data };
        let dim_kv = h / self.heads * self.kv_heads;
        if i == 0 || i == self.num_layers + 1 {
            return h * self.vocab / tp / sf;
        }
        if i == self.num_layers + 2 {
            return h / sf;
        }
        h / sf
            + h * (h + 2 * dim_kv) / tp / sf
            + h * h / tp / sf
            + h / sf
            + h * 2 * self.ffn / tp / sf
            + h * self.ffn / tp / sf
    }

    /// The layers of pipeline stage `stage`, first and last (`get_layer_index`).
    pub fn layers(&self, stage: u64, p: &Parallelism) -> (u64, u64) {
        let per = self.num_layers / p.pipeline;
        let rem = self.num_layers % p.pipeline;
        let (mut first, mut last) = if stage < rem {
            let first = stage * (per + 1) + 1;
            (first, first + per)
        } else {
            let first = rem * (per + 1) + (stage - rem) * per + 1;
            (first, first + per - 1)
        };
        if stage == p.pipeline - 1 {
            last = self.num_layers + 2;
        }
        if stage == 0 {
            first = 0;
        }
        (first, last)
    }

    /// The elements of one rank's share of the optimizer's state (`get_optimization_groups`).
    pub fn optimizer_elements(&self, p: &Parallelism) -> u64 {
        let n = if p.zero_stage > 0 {
            self.parameters() / (p.data * p.model())
        } else {
            self.parameters() / p.model()
        };
        if n == 0 {
            0
        } else {
            3 * n + 3 * 5 * self.hidden
        }
    }

    /// The files rank `rank` writes in each checkpoint (`save_checkpoint`), in the order it writes them.
    pub fn rank_files(&self, p: &Parallelism, rank: u64) -> Vec<ShardFile> {
        let mp = p.model();
        if p.zero_stage == 0 && rank >= mp {
            return Vec::new(); // rank_to_checkpoint is 0: only the first TP x PP ranks write
        }
        let (stage, dp_rank, mp_rank) = ((rank / p.tensor) % p.pipeline, rank / mp, rank % mp);
        let (first, last) = self.layers(stage, p);
        let layer_bytes = |i: u64| self.layer_elements(i, p) * self.model_bytes;
        let mut files = Vec::new();
        let model = |name: String, bytes: u64| ShardFile { name, bytes, model: true };
        if matches!(p.zero_stage, 1 | 2) {
            if dp_rank == 0 && p.pipeline > 1 {
                for i in first..=last {
                    files.push(model(format!("layer_{i}-model_{mp_rank}_model_states.pt"), layer_bytes(i)));
                }
            } else if dp_rank == 0 {
                let bytes = (first..=last).map(layer_bytes).sum();
                files.push(model(format!("model_{mp_rank}_model_states.pt"), bytes));
            }
        } else {
            let bytes = (first..=last).map(layer_bytes).sum();
            files.push(model(format!("zero_pp_rank_{dp_rank}_mp_rank_{mp_rank}_model_states.pt"), bytes));
        }
        let opt = self.optimizer_elements(p) * self.optimizer_bytes;
        if opt > 0 {
            files.push(ShardFile {
                name: format!("zero_pp_rank_{dp_rank}_mp_rank_{mp_rank}_optim_states.pt"),
                bytes: opt,
                model: false,
            });
        }
        files
    }
}

#[cfg(test)]
mod tests {
    //! Against DLIO's numbers for MLPerf Storage's llama3 workloads (mlcommons/storage
    //! configs/dlio/workload/llama3_*.yaml, Submission_guidelines.md table 2: TP × PP × DP, ZeRO), each
    //! expected value worked out by hand from DLIO's formulas in the comments. h: hidden, f: ffn, V: vocab,
    //! a: heads, k: kv heads, L: layers; dim_kv = h / a * k; a transformer layer holds
    //! h + h(h + 2 dim_kv) + h² + h + 2fh + fh elements; the model 2Vh + L × layer + h.

    use super::*;

    fn llama(layers: u64, h: u64, f: u64, a: u64, k: u64) -> Transformer {
        Transformer {
            num_layers: layers,
            hidden: h,
            ffn: f,
            vocab: 128_256,
            heads: a,
            kv_heads: k,
            model_bytes: 2,
            optimizer_bytes: 4,
        }
    }

    fn par(tensor: u64, pipeline: u64, data: u64, zero_stage: u64) -> Parallelism {
        Parallelism { tensor, pipeline, data, zero_stage }
    }

    fn sizes(files: &[ShardFile]) -> (u64, u64) {
        let m = files.iter().filter(|f| f.model).map(|f| f.bytes).sum();
        (m, files.iter().filter(|f| !f.model).map(|f| f.bytes).sum())
    }

    #[test]
    fn llama3_8b_on_8_ranks_zero3() {
        // h 4096, f 14336, a 32, k 8: dim_kv 1024; layer = 4096 + 4096·6144 + 4096² + 4096 + 2·14336·4096
        // + 14336·4096 = 8192 + 25,165,824 + 16,777,216 + 117,440,512 + 58,720,256 = 218,112,000.
        // Model: 2 · 128256 · 4096 = 1,050,673,152, + 32 · 218,112,000 = 6,979,584,000, + 4096
        // = 8,030,261,248 parameters.
        let m = llama(32, 4096, 14336, 32, 8);
        assert_eq!(m.parameters(), 8_030_261_248);
        // TP 1, PP 1, DP 8, ZeRO 3: every rank holds 1/8 of every tensor, layers 0..=34.
        // Embedding and lm_head: 4096 · 128256 / 8 = 65,667,072 each; the norm 4096 / 8 = 512; a layer
        // 512 + 25,165,824/8 + 16,777,216/8 + 512 + 117,440,512/8 + 58,720,256/8 = 1024 + 3,145,728
        // + 2,097,152 + 14,680,064 + 7,340,032 = 27,264,000. 2 · 65,667,072 + 32 · 27,264,000 + 512
        // = 1,003,782,656 elements, fp16: 2,007,565,312 bytes.
        // Optimizer: 8,030,261,248 / 8 = 1,003,782,656; 3 · that + 15 · 4096 = 3,011,409,408, fp32:
        // 12,045,637,632 bytes.
        let p = par(1, 1, 8, 3);
        for r in 0..8 {
            let f = m.rank_files(&p, r);
            assert_eq!(sizes(&f), (2_007_565_312, 12_045_637_632), "rank {r}");
            assert_eq!(f[0].name, format!("zero_pp_rank_{r}_mp_rank_0_model_states.pt"));
            assert_eq!(f[1].name, format!("zero_pp_rank_{r}_mp_rank_0_optim_states.pt"));
        }
        // 8 × 14,053,202,944 = 112,425,623,552 bytes = 104.7 GiB: the guidelines' "105 GB"
        // (mlpstorage's LLM_SIZE_BY_RANK: 15 GB of model, 90 of optimizer).
    }

    #[test]
    fn llama3_70b_on_64_ranks_zero3() {
        // h 8192, f 28672, a 128, k 8: dim_kv 512; layer = 16384 + 8192 · 9216 + 8192² + 3 · 28672 · 8192
        // = 16,384 + 75,497,472 + 67,108,864 + 704,643,072 = 847,265,792. Model: 2 · 128256 · 8192
        // = 2,101,346,304, + 80 layers 67,781,263,360, + 8192 = 69,882,617,856.
        let m = llama(80, 8192, 28672, 128, 8);
        assert_eq!(m.parameters(), 69_882_617_856);
        // TP 8, PP 1, DP 8, ZeRO 3 (64 ranks): a tensor split 8 ways, then 8 again; norms 8 ways.
        // Embedding: 8192 · 128256 / 8 / 8 = 16,416,768 (twice); norm 8192 / 8 = 1024; a layer 1024
        // + 75,497,472/64 + 67,108,864/64 + 1024 + 469,762,048/64 + 234,881,024/64 = 2048 + 1,179,648
        // + 1,048,576 + 7,340,032 + 3,670,016 = 13,240,320. 2 · 16,416,768 + 80 · 13,240,320 + 1024
        // = 1,092,060,160 elements: 2,184,120,320 bytes.
        // Optimizer: 69,882,617,856 / 64 = 1,091,915,904; 3 · that + 15 · 8192 = 3,275,870,592 elements:
        // 13,103,482,368 bytes.
        let p = par(8, 1, 8, 3);
        for r in [0, 7, 8, 63] {
            assert_eq!(sizes(&m.rank_files(&p, r)), (2_184_120_320, 13_103_482_368), "rank {r}");
        }
        // 64 × 15,287,602,688 = 978,406,572,032 bytes = 911.2 GiB: the guidelines' "912 GB".
    }

    #[test]
    fn llama3_405b_on_512_ranks_zero1() {
        // h 16384, f 53248, a 128, k 8: dim_kv 1024; layer = 32768 + 16384 · 18432 + 16384² + 3 · 53248
        // · 16384 = 32,768 + 301,989,888 + 268,435,456 + 2,617,245,696 = 3,187,703,808. Model:
        // 2 · 128256 · 16384 = 4,202,692,608, + 126 layers 401,650,679,808, + 16384 = 405,853,388,800.
        let m = llama(126, 16384, 53248, 128, 8);
        assert_eq!(m.parameters(), 405_853_388_800);
        // TP 8, PP 32, DP 2, ZeRO 1: 126 = 32 · 3 + 30, so stages 0..29 have 4 layers, 30 and 31 three.
        let p = par(8, 32, 2, 1);
        assert_eq!(m.layers(0, &p), (0, 4), "the embedding and layers 1-4");
        assert_eq!(m.layers(29, &p), (117, 120));
        assert_eq!(m.layers(31, &p), (124, 128), "layers 124-126, lm_head, the norm");
        // A layer per tensor rank (no ZeRO-3 sharding): 16384 + 301,989,888/8 + 268,435,456/8 + 16384
        // + 1,744,830,464/8 + 872,415,232/8 = 32,768 + 37,748,736 + 33,554,432 + 218,103,808
        // + 109,051,904 = 398,491,648 elements, 796,983,296 bytes. The embedding 16384 · 128256 / 8
        // = 262,668,288 elements, 525,336,576 bytes.
        // Rank 0 (stage 0, DP rank 0): embedding + 4 layers = 525,336,576 + 3,187,933,184 = 3,713,269,760
        // bytes of model, in 5 files (one a layer).
        // Optimizer: 405,853,388,800 / 512 = 792,682,400; 3 · that + 15 · 16384 = 2,378,292,960 elements:
        // 9,513,171,840 bytes, on every rank.
        let r0 = m.rank_files(&p, 0);
        assert_eq!(sizes(&r0), (3_713_269_760, 9_513_171_840));
        assert_eq!(r0.len(), 6);
        assert_eq!(r0[0].name, "layer_0-model_0_model_states.pt");
        assert_eq!(r0[4].name, "layer_4-model_0_model_states.pt");
        // Rank 8 (stage 1): 4 layers, 3,187,933,184. Rank 255 (stage 31): 3 layers + lm_head + the norm
        // (16384 · 2 bytes) = 2,390,949,888 + 525,336,576 + 32,768 = 2,916,319,232.
        assert_eq!(sizes(&m.rank_files(&p, 8)).0, 3_187_933_184);
        assert_eq!(sizes(&m.rank_files(&p, 255)).0, 2_916_319_232);
        // Rank 256 (DP rank 1): ZeRO 1 writes its optimizer share only.
        let r256 = m.rank_files(&p, 256);
        assert_eq!(sizes(&r256), (0, 9_513_171_840));
        assert_eq!(r256[0].name, "zero_pp_rank_1_mp_rank_0_optim_states.pt");
        let total: u64 = (0..512).map(|r| m.rank_files(&p, r).iter().map(|f| f.bytes).sum::<u64>()).sum();
        assert_eq!(total, 5_682_508_791_808, "5.29 TB, the guidelines' figure");
    }

    #[test]
    fn llama3_1t_on_1024_ranks_zero1() {
        // h 25872, f 98304, a 192, k 32: dim_kv 25872/192 = 134 (floored) · 32 = 4288; layer = 51744
        // + 25872 · 34448 + 25872² + 3 · 98304 · 25872 = 51,744 + 891,238,656 + 669,360,384
        // + 7,629,963,264 = 9,190,614,048. Model: 2 · 128256 · 25872 = 6,636,478,464, + 128 layers
        // 1,176,398,598,144, + 25872 = 1,183,035,102,480.
        let m = llama(128, 25872, 98304, 192, 32);
        assert_eq!(m.parameters(), 1_183_035_102_480);
        // TP 8, PP 64, DP 2, ZeRO 1: two layers a stage. Rank 0: the embedding 25872 · 128256 / 8
        // = 414,779,904 elements and layers 1-2, each 51,744 + 891,238,656/8 + 669,360,384/8
        // + 5,086,642,176/8 + 2,543,321,088/8 = 51,744 + 111,404,832 + 83,670,048 + 635,830,272
        // + 317,915,136 = 1,148,872,032: 414,779,904 + 2,297,744,064 = 2,712,523,968 elements,
        // 5,425,047,936 bytes.
        // Optimizer: 1,183,035,102,480 / 1024 = 1,155,307,717 (floored); 3 · that + 15 · 25872
        // = 3,466,311,231 elements: 13,865,244,924 bytes.
        let p = par(8, 64, 2, 1);
        assert_eq!(sizes(&m.rank_files(&p, 0)), (5_425_047_936, 13_865_244_924));
        // The last stage's rank 511: layers 127-128, lm_head and the norm: 2,297,744,064 + 414,779,904
        // + 25,872 = 2,712,549,840 elements, 5,425,099,680 bytes.
        assert_eq!(sizes(&m.rank_files(&p, 511)).0, 5_425_099_680);
        assert_eq!(sizes(&m.rank_files(&p, 1023)), (0, 13_865_244_924));
    }

    #[test]
    fn zero_0_writes_from_the_first_model_parallel_ranks_only() {
        let m = llama(4, 256, 1024, 8, 4);
        let p = par(2, 1, 2, 0);
        assert_eq!(m.rank_files(&p, 0)[0].name, "zero_pp_rank_0_mp_rank_0_model_states.pt");
        assert!(m.rank_files(&p, 2).is_empty(), "rank_to_checkpoint is 0 for ranks past TP x PP");
        // Without ZeRO the optimizer is split over TP × PP only.
        assert_eq!(m.optimizer_elements(&p), 3 * (m.parameters() / 2) + 15 * 256);
    }
}
