//! notation
use serde::{Deserialize, Serialize};
/// The user-editable notation design (YAML).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct NotationConfig {}
