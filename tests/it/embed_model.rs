//! The embedding model loaded with its int8 tables kept int8 (rows scaled as they are read)
//! gives the same vectors as the model file loaded as it is, whose tables the runtime turns into
//! f32 copies at load; and the provisioned model is one the rewrite applies to, so the memory it
//! saves is not silently lost when the model changes.

use crate::support::model_dir;
use refrain::config::Config;
use refrain::embed::{Embedder, FastEmbedder, ModelFiles, Tables};

const TEXTS: [&str; 6] = [
    "how do I list the files changed in the last commit with git",
    "mute notifications for two hours",
    "rename the handler `parse_args` in src/cli/mod.rs",
    "x",
    "Résumé: naïve café — 東京 🚀 ünïcödé and a long tail of words to pad the batch out a little further",
    "SELECT * FROM users WHERE id = 42;",
];

#[test]
fn int8_tables_give_the_vectors_of_the_model_as_shipped() {
    let files = ModelFiles::under(&model_dir());
    let max = Config::default().model.max_length;
    let lean = FastEmbedder::load_with(&files, 1, max, Tables::Int8).unwrap();
    let folded = FastEmbedder::load_with(&files, 1, max, Tables::Folded).unwrap();
    // One at a time and in one padded batch: the lookups of padding rows too.
    let one = |m: &FastEmbedder| TEXTS.iter().map(|t| m.embed(&[t]).unwrap().remove(0)).collect::<Vec<_>>();
    for (a, b) in [(one(&lean), one(&folded)), (lean.embed(&TEXTS).unwrap(), folded.embed(&TEXTS).unwrap())] {
        for ((x, y), text) in a.iter().zip(&b).zip(TEXTS) {
            let worst = x.iter().zip(y).map(|(p, q)| (p - q).abs()).fold(0.0f32, f32::max);
            assert!(worst <= 1e-6, "{text:?}: vectors differ by up to {worst}");
        }
    }
}

#[test]
fn the_provisioned_model_has_its_word_table_read_row_by_row() {
    let onnx = std::fs::read(ModelFiles::under(&model_dir()).model_dir.join("model.onnx")).unwrap();
    let lean = refrain::embed::tables::read_rows_int8(&onnx).unwrap().expect("a table to rewrite");
    assert!(
        lean.tables.iter().any(|t| t.contains("word_embeddings")),
        "the word table (45 MB as f32) is not among the rewritten: {:?}",
        lean.tables
    );
}
