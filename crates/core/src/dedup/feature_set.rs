//! What a fingerprint is: [`Fingerprint`], the sorted set of a post's content features, each
//! a 29-bit hash with its [`FeatureKind`], and its stable stored form
//! ([`Fingerprint::to_bytes`], [`Fingerprint::to_hex`]) with the errors of reading it back.

use std::cmp::Reverse;

/// Version byte of [`Fingerprint::to_bytes`].
const FINGERPRINT_VERSION: u8 = 1;

/// What a feature of a [`Fingerprint`] stands for (the low 3 bits of each stored value).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum FeatureKind {
    /// A word stem from the body of the post.
    Word = 0,
    /// A word stem that only occurs in sentences carrying a contact.
    ContactLineWord = 1,
    /// A number without a currency.
    Number = 2,
    /// An amount of money (currency sign or word, or a `к`/`k`/`тыс` multiplier).
    Money = 3,
    /// An `@handle`, a link or a phone number.
    Contact = 4,
}

impl FeatureKind {
    pub(super) fn from_bits(bits: u32) -> Option<Self> {
        Some(match bits {
            0 => Self::Word,
            1 => Self::ContactLineWord,
            2 => Self::Number,
            3 => Self::Money,
            4 => Self::Contact,
            _ => return None,
        })
    }

    /// Which kind wins when one feature hash was seen as two kinds in one post.
    fn rank(self) -> u8 {
        match self {
            Self::ContactLineWord | Self::Number => 0,
            Self::Word | Self::Money | Self::Contact => 1,
        }
    }
}

/// The content features of one post; see the [module documentation](super).
///
/// Compact (4 bytes per feature) and stable across runs and machines, so it can be stored
/// with the post ([`Fingerprint::to_bytes`], [`Fingerprint::to_hex`]) and an index rebuilt
/// from the database after a restart.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Fingerprint {
    /// `hash << 3 | kind`, sorted, one entry per hash.
    pub(super) features: Vec<u32>,
}

/// A stored fingerprint that cannot be read back.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FingerprintError {
    /// Empty input, or not 1 + 4·n bytes.
    #[error("fingerprint has a bad length ({0} bytes)")]
    Length(usize),
    /// The version byte is not one this build writes.
    #[error("fingerprint version {0} is not supported")]
    Version(u8),
    /// Features out of order, repeated, or of an unknown kind.
    #[error("fingerprint is corrupt at feature {0}")]
    Corrupt(usize),
    /// The hex text is not hex.
    #[error("fingerprint is not valid hex: {0}")]
    Hex(#[from] hex::FromHexError),
}

impl Fingerprint {
    /// Number of features.
    pub fn len(&self) -> usize {
        self.features.len()
    }

    /// Whether the post had no content features at all (only emoji, hashtags, a contact…).
    pub fn is_empty(&self) -> bool {
        self.features.is_empty()
    }

    /// The features as `(hash, kind)` pairs, sorted by hash.
    pub fn features(&self) -> impl Iterator<Item = (u32, FeatureKind)> + '_ {
        self.features.iter().map(|&v| {
            (
                v >> 3,
                FeatureKind::from_bits(v & 7).unwrap_or(FeatureKind::Word),
            )
        })
    }

    /// Serializes to bytes: a version byte, then each feature as a little-endian `u32`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(1 + 4 * self.features.len());
        out.push(FINGERPRINT_VERSION);
        for v in &self.features {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out
    }

    /// Reads what [`Fingerprint::to_bytes`] wrote, checking it.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, FingerprintError> {
        let (&version, rest) = bytes.split_first().ok_or(FingerprintError::Length(0))?;
        if version != FINGERPRINT_VERSION {
            return Err(FingerprintError::Version(version));
        }
        if rest.len() % 4 != 0 {
            return Err(FingerprintError::Length(bytes.len()));
        }
        let features: Vec<u32> = rest
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        for (i, &v) in features.iter().enumerate() {
            let ordered = i == 0 || features[i - 1] >> 3 < v >> 3;
            if !ordered || FeatureKind::from_bits(v & 7).is_none() {
                return Err(FingerprintError::Corrupt(i));
            }
        }
        Ok(Self { features })
    }

    /// [`Fingerprint::to_bytes`] as lowercase hex.
    pub fn to_hex(&self) -> String {
        hex::encode(self.to_bytes())
    }

    /// Reads what [`Fingerprint::to_hex`] wrote.
    pub fn from_hex(text: &str) -> Result<Self, FingerprintError> {
        Self::from_bytes(&hex::decode(text.trim())?)
    }

    pub(super) fn from_raw(mut raw: Vec<(u32, FeatureKind)>) -> Self {
        raw.sort_unstable_by_key(|&(h, k)| (h, Reverse(k.rank())));
        raw.dedup_by_key(|&mut (h, _)| h);
        Self {
            features: raw.into_iter().map(|(h, k)| h << 3 | k as u32).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::dedup::fingerprint;
    use crate::dedup::tests::RU_POST;

    #[test]
    fn fingerprint_round_trips_through_bytes_and_hex() {
        let fp = fingerprint(RU_POST);
        assert!(fp.len() > 15, "{}", fp.len());
        let bytes = fp.to_bytes();
        assert_eq!(bytes.len(), 1 + 4 * fp.len());
        assert_eq!(Fingerprint::from_bytes(&bytes).unwrap(), fp);
        assert_eq!(Fingerprint::from_hex(&fp.to_hex()).unwrap(), fp);
        // Stable across runs and builds: the stored column must keep meaning the same.
        assert_eq!(
            fingerprint("Нужен Python-бот, 5000₽ @shop").to_hex(),
            fingerprint("нужен python бот 5 000 руб @SHOP").to_hex()
        );

        assert_eq!(
            Fingerprint::from_bytes(&[]),
            Err(FingerprintError::Length(0))
        );
        assert_eq!(
            Fingerprint::from_bytes(&[9, 0, 0, 0, 0]),
            Err(FingerprintError::Version(9))
        );
        assert_eq!(
            Fingerprint::from_bytes(&bytes[..bytes.len() - 1]),
            Err(FingerprintError::Length(bytes.len() - 1))
        );
        let mut repeated = bytes.clone();
        repeated.copy_within(1..5, 5);
        assert_eq!(
            Fingerprint::from_bytes(&repeated),
            Err(FingerprintError::Corrupt(1))
        );
        let mut bad_kind = bytes.clone();
        bad_kind[1] |= 7;
        assert_eq!(
            Fingerprint::from_bytes(&bad_kind),
            Err(FingerprintError::Corrupt(0))
        );
        assert!(matches!(
            Fingerprint::from_hex("zz"),
            Err(FingerprintError::Hex(_))
        ));
    }
}
