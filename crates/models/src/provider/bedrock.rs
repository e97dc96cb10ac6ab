//! Amazon Bedrock's Converse API: `/model/MODEL_ID/converse` in the region
//! `AWS_REGION` names, signed with AWS Signature Version 4 from the standard
//! credential variables, or authorized by a Bedrock API key; its stop
//! reasons; the vendor's model inside a model id, for prices.

use super::{model_at, Api, Named, Provider};
use crate::Finish;

/// Amazon Bedrock.
pub(super) struct Bedrock;

impl Provider for Bedrock {
    fn name(&self) -> &'static str {
        "bedrock"
    }

    fn form(&self) -> &'static str {
        "bedrock:MODEL_ID[@URL]"
    }

    fn read(&self, rest: Option<&str>) -> Result<Named, String> {
        model_at(self, rest, false)
    }

    fn api(&self) -> Api {
        Api::Converse
    }

    fn key_variable(&self) -> Option<&'static str> {
        Some("AWS_BEARER_TOKEN_BEDROCK")
    }

    fn credential_variables(&self) -> &'static [&'static str] {
        &[
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
        ]
    }

    fn base_url_variable(&self) -> Option<&'static str> {
        Some("AWS_ENDPOINT_URL_BEDROCK_RUNTIME")
    }

    fn finish(&self, word: &str) -> Finish {
        match word {
            "end_turn" | "stop_sequence" => Finish::Complete,
            "max_tokens" | "model_context_window_exceeded" => Finish::Truncated,
            "guardrail_intervened" | "content_filtered" => Finish::Filtered,
            _ => Finish::Other,
        }
    }

    fn price_key(&self, model: &str) -> String {
        vendor_model(model).to_string()
    }

    fn takes(&self, _model: &str, p: &crate::GenerationParams) -> super::Takes {
        super::thinking_takes(p)
    }

    fn refuses(&self, _model: &str, p: &crate::GenerationParams) -> Option<String> {
        super::anthropic::thinking_budget_too_small(p)
    }
}

/// The vendor's model inside a Bedrock model id: `us.anthropic.claude-sonnet-4-5-20250929-v1:0`
/// is `claude-sonnet-4-5-20250929`; an ARN's last part is read the same way.
fn vendor_model(id: &str) -> &str {
    let id = id.rsplit('/').next().unwrap_or(id);
    // A cross-region profile's prefix, then the vendor's.
    let mut rest = id;
    for prefix in [
        "us.", "eu.", "apac.", "global.", "us-gov.", "jp.", "au.", "ca.",
    ] {
        if let Some(r) = rest.strip_prefix(prefix) {
            rest = r;
            break;
        }
    }
    let rest = rest.split_once('.').map_or(rest, |(_, model)| model);
    // The version suffix: `-v1:0`, `-v2`.
    match rest.rfind("-v") {
        Some(at) if rest[at + 2..].starts_with(|c: char| c.is_ascii_digit()) => &rest[..at],
        _ => rest,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_id_is_priced_as_the_vendor_model_inside_it() {
        assert_eq!(
            vendor_model("us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
            "claude-sonnet-4-5-20250929"
        );
        assert_eq!(
            vendor_model("anthropic.claude-3-haiku-20240307-v1:0"),
            "claude-3-haiku-20240307"
        );
        assert_eq!(
            vendor_model("meta.llama3-70b-instruct-v1:0"),
            "llama3-70b-instruct"
        );
        assert_eq!(
            vendor_model("arn:aws:bedrock:us-east-1::foundation-model/amazon.nova-pro-v1:0"),
            "nova-pro"
        );
    }
}
