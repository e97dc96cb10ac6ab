//! Azure OpenAI: chat completions on a deployment of a resource, whose
//! address the spec gives; a key in `AZURE_OPENAI_API_KEY` or an Entra ID
//! token in `AZURE_OPENAI_AD_TOKEN`; the same Batch API limits as OpenAI's.

use super::{model_at, Api, BatchLimits, Named, Provider};

/// Azure OpenAI.
pub(super) struct Azure;

impl Provider for Azure {
    fn name(&self) -> &'static str {
        "azure"
    }

    fn form(&self) -> &'static str {
        "azure:DEPLOYMENT@https://RESOURCE.openai.azure.com"
    }

    fn read(&self, rest: Option<&str>) -> Result<Named, String> {
        model_at(self, rest, true)
    }

    fn api(&self) -> Api {
        Api::DeploymentChat
    }

    fn key_variable(&self) -> Option<&'static str> {
        Some("AZURE_OPENAI_API_KEY")
    }

    fn credential_variables(&self) -> &'static [&'static str] {
        &["AZURE_OPENAI_AD_TOKEN"]
    }

    fn batch_limits(&self) -> Option<BatchLimits> {
        // Global batch deployments: 100,000 requests and 200 MB a file.
        Some(BatchLimits {
            requests: crate::LARGEST_BATCH,
            bytes: 190_000_000,
        })
    }

    fn reasoning_by_name(&self, model: &str) -> bool {
        super::openai_reasoning_name(model)
    }
}
