//! Helpers shared by the file source tests (`jsonl.rs`, `tdesktop.rs`).

use std::io::Write;

use jobwire_core::IncomingPost;
use jobwire_intake::{Source, SourceError};

/// A temporary file holding `content`.
pub fn write_temp(content: impl AsRef<[u8]>) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().expect("temp file");
    file.write_all(content.as_ref()).expect("write");
    file
}

/// Reads everything: the batches, and the error that ended the source, if any.
pub async fn drain(source: &mut impl Source) -> (Vec<Vec<IncomingPost>>, Option<SourceError>) {
    let mut batches = Vec::new();
    loop {
        match source.next_batch().await {
            Ok(Some(batch)) => batches.push(batch),
            Ok(None) => return (batches, None),
            Err(err) => {
                assert!(
                    matches!(source.next_batch().await, Ok(None)),
                    "a source is finished after an error"
                );
                return (batches, Some(err));
            }
        }
    }
}
