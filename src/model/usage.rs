//! What an agent said it used: tokens, turns and cost.

use serde::{Deserialize, Serialize};

/// Tokens, turns and cost, as the agent reported them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub cost_usd: Option<f64>,
    pub turns: Option<u64>,
}
