//! A BERT-family encoder (a `model.safetensors` with its `config.json` and
//! `tokenizer.json`, as sentence-transformers ship them) run on the CPU with
//! candle, giving the contextual token embeddings BERTScore compares.
//!
//! The encoder is handed the files' bytes; reading them is the caller's
//! business, so this crate does no I/O of its own.

use autoeval_closeness::{EmbedError, TokenEmbedder, TokenEmbeddings};
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use thiserror::Error;
use tokenizers::{Tokenizer, TruncationParams};

/// Why an encoder could not be built.
#[derive(Debug, Error)]
pub enum EncoderError {
    /// `config.json` is not a BERT configuration.
    #[error("config.json is not a BERT configuration: {0}")]
    Config(#[from] serde_json::Error),
    /// `tokenizer.json` could not be loaded or set up.
    #[error("tokenizer.json: {0}")]
    Tokenizer(String),
    /// The weights do not fit the configuration.
    #[error("model.safetensors: {0}")]
    Weights(#[from] candle_core::Error),
}

/// A loaded encoder.
pub struct BertEncoder {
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
    name: String,
    layers: usize,
    width: usize,
}

/// Words for the symbols a BERT WordPiece vocabulary lacks: without them
/// `∀x` and `∃x` both become one unknown token and the two quantifiers look
/// the same to the encoder (∧ ∨ ¬ → ↔ ⊕ are in the vocabulary).
fn spell_symbols(text: &str) -> String {
    text.replace('∀', " forall ")
        .replace('∃', " exists ")
        .replace('≠', " != ")
}

impl BertEncoder {
    /// The encoder named `name` from its three files' contents.
    pub fn from_bytes(
        name: &str,
        config: &[u8],
        tokenizer: &[u8],
        weights: Vec<u8>,
    ) -> Result<Self, EncoderError> {
        let config: Config = serde_json::from_slice(config)?;
        let mut tokenizer =
            Tokenizer::from_bytes(tokenizer).map_err(|e| EncoderError::Tokenizer(e.to_string()))?;
        // sentence-transformers pad every text to 128 tokens and cut it
        // there; BERTScore encodes each text alone, cut only at the model's
        // position limit.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: config.max_position_embeddings,
                ..Default::default()
            }))
            .map_err(|e| EncoderError::Tokenizer(e.to_string()))?;
        let device = Device::Cpu;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device)?;
        let model = BertModel::load(vb, &config)?;
        Ok(BertEncoder {
            model,
            tokenizer,
            device,
            name: name.to_string(),
            layers: config.num_hidden_layers,
            width: config.hidden_size,
        })
    }

    fn forward(&self, text: &str) -> Result<TokenEmbeddings, String> {
        let encoding = self
            .tokenizer
            .encode(spell_symbols(text), true)
            .map_err(|e| e.to_string())?;
        let tensor = |v: &[u32]| {
            Tensor::new(v, &self.device)
                .and_then(|t| t.unsqueeze(0))
                .map_err(|e| e.to_string())
        };
        let ids = tensor(encoding.get_ids())?;
        let types = tensor(encoding.get_type_ids())?;
        let mask = tensor(encoding.get_attention_mask())?;
        let hidden = self
            .model
            .forward(&ids, &types, Some(&mask))
            .and_then(|h| h.squeeze(0))
            .and_then(|h| h.to_vec2::<f32>())
            .map_err(|e| e.to_string())?;
        Ok(TokenEmbeddings {
            vectors: hidden,
            special: encoding
                .get_special_tokens_mask()
                .iter()
                .map(|&m| m == 1)
                .collect(),
        })
    }
}

impl TokenEmbedder for BertEncoder {
    fn embed(&self, text: &str) -> Result<TokenEmbeddings, EmbedError> {
        self.forward(text)
            .map_err(|e| EmbedError(format!("{}: {e}", self.name)))
    }

    fn describe(&self) -> String {
        format!(
            "{} ({} layers, {} dimensions, last layer)",
            self.name, self.layers, self.width
        )
    }
}
