//! The fault run's data (`scripts/chaos/gen.py`): every generated job must be a vacancy of
//! its own to intake, or the run reports a job as lost that intake rightly filed as a
//! re-post of another.

use std::process::Command;
use std::sync::Arc;

use jobwire_intake::stage::{IntakeOutcome, IntakeStage};

/// Seeds whose random budgets once gave two jobs of one task the same budget: intake kept the
/// second as a near-duplicate of the first, and the fault run ended `lost=300` (one job for
/// 300 subscribers) with nothing stuck in the pipeline.
const SEEDS_THAT_MERGED: [u32; 6] = [13, 36, 104, 106, 176, 183];

#[tokio::test]
async fn every_generated_job_is_taken_in_as_a_vacancy_of_its_own() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/chaos/gen.py");
    for seed in SEEDS_THAT_MERGED.into_iter().chain(1..=12) {
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new("python3")
            .arg(script)
            .arg(dir.path().join("data"))
            .args(["--jobs", "40", "--noise", "10", "--subscribers", "3"])
            .args(["--seed", &seed.to_string()])
            .output()
            .expect("python3 runs scripts/chaos/gen.py");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let store = jobwire_store::SqliteStore::open_path(&dir.path().join("j.db"))
            .await
            .unwrap();
        let intake = IntakeStage::new(Arc::new(store), Arc::new(jobwire_queue::MemoryQueue::new()));
        let mut source = jobwire_intake::JsonlSource::open(
            &dir.path().join("data/oracle.jsonl"),
            chrono::Utc::now(),
        )
        .await
        .unwrap();
        let mut merged = Vec::new();
        while let Some(batch) = jobwire_intake::Source::next_batch(&mut source)
            .await
            .unwrap()
        {
            for post in batch {
                let text = post.text.clone();
                if let IntakeOutcome::NearDuplicate { .. } = intake.ingest(post).await.unwrap() {
                    merged.push(text);
                }
            }
        }
        assert!(
            merged.is_empty(),
            "seed {seed}: taken as re-posts: {merged:#?}"
        );
    }
}
