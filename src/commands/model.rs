//! (Being written.)
use clap::Args;

use crate::cli::Ctx;
use crate::error::CliError;

/// Fetch, verify and inspect the pinned embedding model
#[derive(Args, Debug)]
pub struct ModelArgs {}

pub fn run(_ctx: &Ctx, _args: &ModelArgs) -> Result<u8, CliError> {
    Ok(0)
}
