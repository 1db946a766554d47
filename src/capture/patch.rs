//! apply_patch text. (Being written.)
