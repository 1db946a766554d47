//! A test double for the vector lane: bag-of-words feature hashing.
//!
//! It is **not** a semantic model. Texts that share words land near each other and texts that
//! share none are orthogonal (up to hash collisions); paraphrases with different words are not
//! recognised. What it offers is what fast tests need: deterministic, dependency-free, no
//! files, the same dimension as the real model, and unit-length vectors, so the code around an
//! [`Embedder`] (caching, ranking, fusion, replay) can be tested without ONNX Runtime.

use super::{EmbedError, Embedder};

pub(crate) const HASH_MODEL_ID: &str = "peat-hash-384";
pub(crate) const HASH_DIM: usize = 384;

/// See the module documentation: feature hashing of lowercase alphanumeric words.
#[derive(Debug, Clone, Default)]
pub(crate) struct HashEmbedder;

impl HashEmbedder {
    pub(crate) fn new() -> HashEmbedder {
        HashEmbedder
    }

    /// One text's vector: each word adds ±1 at a hashed index; the sum is L2-normalised.
    /// A text with no words is the zero vector.
    pub(crate) fn vector(text: &str) -> Vec<f32> {
        let mut v = vec![0f32; HASH_DIM];
        let lower = text.to_lowercase();
        for word in lower.split(|c: char| !c.is_alphanumeric()) {
            if word.is_empty() {
                continue;
            }
            let h = fnv1a64(word.as_bytes());
            // Low bits choose the index, the top bit the sign (so collisions tend to cancel
            // rather than add up).
            let i = (h % HASH_DIM as u64) as usize;
            v[i] += if h >> 63 == 0 { 1.0 } else { -1.0 };
        }
        super::normalize(&mut v);
        v
    }
}

impl Embedder for HashEmbedder {
    #[cfg(test)]
    fn model_id(&self) -> &str {
        HASH_MODEL_ID
    }

    fn dim(&self) -> usize {
        HASH_DIM
    }

    fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|t| HashEmbedder::vector(t)).collect())
    }
}

/// FNV-1a, 64-bit: fixed constants, so vectors never change between builds or platforms.
fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::cosine;

    #[test]
    fn vectors_are_unit_length_and_the_size_the_lane_expects() {
        let mut e = HashEmbedder::new();
        let v = e.embed(&["Fix the flaky login test"]).unwrap();
        assert_eq!(v[0].len(), e.dim());
        let norm: f32 = v[0].iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5);
        assert_eq!(e.model_id(), "peat-hash-384");
    }

    #[test]
    fn texts_sharing_words_are_nearer_than_texts_sharing_none() {
        let a = HashEmbedder::vector("refactor the ledger lock");
        let b = HashEmbedder::vector("the ledger lock times out");
        let c = HashEmbedder::vector("bump tantivy version");
        assert!(cosine(&a, &b) > 0.4, "{}", cosine(&a, &b));
        assert!(cosine(&a, &b) > cosine(&a, &c) + 0.3);
    }

    #[test]
    fn it_is_deterministic_and_ignores_case_and_punctuation() {
        assert_eq!(
            HashEmbedder::vector("Ledger, LOCK!"),
            HashEmbedder::vector("ledger lock")
        );
        let once = HashEmbedder::vector("same text");
        assert_eq!(once, HashEmbedder::vector("same text"));
        // Pinned: a change here silently invalidates every cached test vector.
        assert_eq!(fnv1a64(b"peat"), 0xe005_830d_d747_f43b);
    }

    #[test]
    fn a_text_without_words_is_the_zero_vector() {
        assert!(HashEmbedder::vector(" ... ").iter().all(|&x| x == 0.0));
        let mut e = HashEmbedder::new();
        assert!(e.embed(&[]).unwrap().is_empty());
    }
}
