//! Placeholder until the Amazon Connect provider lands.
use super::CallReport;
pub struct Disconnect {
    pub contact_id: String,
    pub report: CallReport,
}
pub fn parse_event(_body: &str) -> Result<Option<Disconnect>, crate::Error> {
    Ok(None)
}
