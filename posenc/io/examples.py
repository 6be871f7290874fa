"""Model configs as their ``config.json`` files give them (only the fields RoPE reads, values unchanged).

The Hub cannot be reached from here, so each entry is written out from the model's published
config.json / model card; ``tests/data/hf_model_configs.json`` holds what transformers computes
for each (``tools/hf_model_configs.py``).  Where a value could not be copied exactly, the comment
says so.
"""

from __future__ import annotations

import json

from posenc.schemes.scaling import PHI3_MINI_128K

# Phi-3.5-MoE-instruct's 64-entry lists: only their first 8 entries are at hand (as quoted by
# EasyDeL's model tests); the 8th is repeated to 64 entries.  Every other Phi-3.5-MoE field is the
# real file's, and its attention factor (short_mscale / long_mscale) does not depend on the lists.
_PHIMOE_LONG8 = [1.0199999809265137, 1.0299999713897705, 1.0399999618530273, 1.0499999523162842,
                 1.0499999523162842, 1.0499999523162842, 1.059999942779541, 1.059999942779541]
_PHIMOE_SHORT8 = [1.0, 1.0399999618530273, 1.0399999618530273, 1.0399999618530273,
                  1.0499999523162842, 1.0499999523162842, 1.0499999523162842, 1.0499999523162842]

REAL_CONFIGS: dict[str, dict] = {
    # meta-llama/Llama-3.1-8B config.json
    "Llama 3.1 8B": {
        "_name_or_path": "meta-llama/Llama-3.1-8B", "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 131072,
        "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                         "original_max_position_embeddings": 8192, "rope_type": "llama3"},
        "rope_theta": 500000.0,
    },
    # meta-llama/Llama-4-Scout-17B-16E-Instruct config.json (text_config)
    "Llama 4 Scout": {
        "_name_or_path": "meta-llama/Llama-4-Scout-17B-16E-Instruct", "architectures": ["Llama4ForConditionalGeneration"],
        "model_type": "llama4",
        "text_config": {
            "model_type": "llama4_text", "hidden_size": 5120, "num_attention_heads": 40, "num_key_value_heads": 8,
            "head_dim": 128, "num_hidden_layers": 48, "max_position_embeddings": 10485760, "rope_theta": 500000.0,
            "rope_scaling": {"factor": 16.0, "high_freq_factor": 1.0, "low_freq_factor": 1.0,
                             "original_max_position_embeddings": 8192, "rope_type": "llama3"},
            "attn_temperature_tuning": True, "floor_scale": 8192, "attn_scale": 0.1, "use_qk_norm": True,
        },
    },
    # Qwen/Qwen2.5-7B-Instruct config.json plus the rope_scaling block its model card gives for 128k
    "Qwen2.5 7B + YaRN": {
        "_name_or_path": "Qwen/Qwen2.5-7B-Instruct", "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2",
        "hidden_size": 3584, "num_attention_heads": 28, "num_key_value_heads": 4, "max_position_embeddings": 32768,
        "rope_scaling": {"factor": 4.0, "original_max_position_embeddings": 32768, "type": "yarn"},
        "rope_theta": 1000000.0,
    },
    # deepseek-ai/DeepSeek-V3 config.json
    "DeepSeek-V3": {
        "_name_or_path": "deepseek-ai/DeepSeek-V3", "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
        "hidden_size": 7168, "num_attention_heads": 128, "num_key_value_heads": 128, "kv_lora_rank": 512, "q_lora_rank": 1536,
        "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "max_position_embeddings": 163840,
        "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 1.0, "mscale_all_dim": 1.0,
                         "original_max_position_embeddings": 4096, "type": "yarn"},
        "rope_theta": 10000,
    },
    # deepseek-ai/DeepSeek-V2 config.json
    "DeepSeek-V2": {
        "_name_or_path": "deepseek-ai/DeepSeek-V2", "architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2",
        "hidden_size": 5120, "num_attention_heads": 128, "num_key_value_heads": 128, "kv_lora_rank": 512, "q_lora_rank": 1536,
        "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "max_position_embeddings": 163840,
        "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 0.707, "mscale_all_dim": 0.707,
                         "original_max_position_embeddings": 4096, "type": "yarn"},
        "rope_theta": 10000,
    },
    # microsoft/Phi-3-mini-128k-instruct config.json
    "Phi-3-mini-128k": {
        "_name_or_path": "microsoft/Phi-3-mini-128k-instruct", "architectures": ["Phi3ForCausalLM"], "model_type": "phi3",
        "hidden_size": 3072, "num_attention_heads": 32, "num_key_value_heads": 32, "max_position_embeddings": 131072,
        "original_max_position_embeddings": 4096, "rope_theta": 10000.0, "sliding_window": 262144,
        "rope_scaling": {"long_factor": list(PHI3_MINI_128K["long_factor"]), "short_factor": list(PHI3_MINI_128K["short_factor"]),
                         "type": "longrope"},
    },
    # microsoft/Phi-3.5-MoE-instruct config.json (factor lists: see _PHIMOE_LONG8 above)
    "Phi-3.5-MoE": {
        "_name_or_path": "microsoft/Phi-3.5-MoE-instruct", "architectures": ["PhiMoEForCausalLM"], "model_type": "phimoe",
        "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 131072,
        "original_max_position_embeddings": 4096, "rope_theta": 10000.0, "sliding_window": 131072,
        "rope_scaling": {"long_factor": _PHIMOE_LONG8 + _PHIMOE_LONG8[-1:] * 56, "long_mscale": 1.243163121016122,
                         "original_max_position_embeddings": 4096, "short_factor": _PHIMOE_SHORT8 + _PHIMOE_SHORT8[-1:] * 56,
                         "short_mscale": 1.243163121016122, "type": "longrope"},
    },
    # google/gemma-3-4b-it config.json (text_config)
    "Gemma 3 4B": {
        "_name_or_path": "google/gemma-3-4b-it", "architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
        "text_config": {
            "model_type": "gemma3_text", "hidden_size": 2560, "num_attention_heads": 8, "num_key_value_heads": 4,
            "head_dim": 256, "num_hidden_layers": 34, "max_position_embeddings": 131072, "query_pre_attn_scalar": 256,
            "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0, "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
            "sliding_window": 1024, "sliding_window_pattern": 6,
        },
    },
    # EleutherAI/gpt-neox-20b config.json
    "GPT-NeoX-20B": {
        "_name_or_path": "EleutherAI/gpt-neox-20b", "architectures": ["GPTNeoXForCausalLM"], "model_type": "gpt_neox",
        "hidden_size": 6144, "num_attention_heads": 64, "num_hidden_layers": 44, "max_position_embeddings": 2048,
        "rotary_emb_base": 10000, "rotary_pct": 0.25,
    },
    # EleutherAI/gpt-j-6b config.json
    "GPT-J-6B": {
        "_name_or_path": "EleutherAI/gpt-j-6b", "architectures": ["GPTJForCausalLM"], "model_type": "gptj",
        "n_embd": 4096, "n_head": 16, "n_layer": 28, "n_positions": 2048, "rotary_dim": 64,
    },
    # THUDM/chatglm3-6b-32k config.json (remote code: modeling_chatglm.py)
    "ChatGLM3-6B-32k": {
        "_name_or_path": "THUDM/chatglm3-6b-32k", "architectures": ["ChatGLMModel"], "model_type": "chatglm",
        "hidden_size": 4096, "num_attention_heads": 32, "kv_channels": 128, "multi_query_attention": True,
        "multi_query_group_num": 2, "num_layers": 28, "seq_length": 32768, "rope_ratio": 50, "original_rope": True,
    },
    # Qwen/Qwen2-VL-7B-Instruct config.json
    "Qwen2-VL 7B (M-RoPE)": {
        "_name_or_path": "Qwen/Qwen2-VL-7B-Instruct", "architectures": ["Qwen2VLForConditionalGeneration"], "model_type": "qwen2_vl",
        "hidden_size": 3584, "num_attention_heads": 28, "num_key_value_heads": 4, "max_position_embeddings": 32768,
        "rope_theta": 1000000.0, "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]},
    },
    # mistralai/Mistral-7B-Instruct-v0.3 config.json (plain RoPE, rope_theta 1e6)
    "Mistral 7B v0.3": {
        "_name_or_path": "mistralai/Mistral-7B-Instruct-v0.3", "architectures": ["MistralForCausalLM"], "model_type": "mistral",
        "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 32768,
        "rope_theta": 1000000.0, "sliding_window": None,
    },
    # mistralai/Ministral-3-8B-Instruct-2512 config.json (text_config): YaRN x16 and llama_4_scaling_beta
    "Ministral 3 8B": {
        "_name_or_path": "mistralai/Ministral-3-8B-Instruct-2512", "architectures": ["Mistral3ForConditionalGeneration"],
        "model_type": "mistral3",
        "text_config": {
            "model_type": "ministral3", "hidden_size": 4096, "head_dim": 128, "num_attention_heads": 32, "num_key_value_heads": 8,
            "num_hidden_layers": 34, "max_position_embeddings": 262144, "sliding_window": None,
            "rope_parameters": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 16.0, "llama_4_scaling_beta": 0.1, "mscale": 1.0,
                                "mscale_all_dim": 1.0, "original_max_position_embeddings": 16384, "rope_theta": 1000000.0,
                                "rope_type": "yarn", "type": "yarn"},
        },
    },
    # HuggingFaceTB/SmolLM3-3B config.json: no RoPE in every 4th layer (no_rope_layers)
    "SmolLM3 3B": {
        "_name_or_path": "HuggingFaceTB/SmolLM3-3B", "architectures": ["SmolLM3ForCausalLM"], "model_type": "smollm3",
        "hidden_size": 2048, "num_attention_heads": 16, "num_key_value_heads": 4, "num_hidden_layers": 36,
        "max_position_embeddings": 65536, "no_rope_layer_interval": 4, "no_rope_layers": [1, 1, 1, 0] * 9, "rope_scaling": None,
        "rope_theta": 5000000.0, "sliding_window": None, "use_sliding_window": False,
    },
    # google/gemma-2-27b config.json: sliding window on every other layer, softmax scale query_pre_attn_scalar^-1/2
    "Gemma 2 27B": {
        "_name_or_path": "google/gemma-2-27b", "architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2",
        "attn_logit_softcapping": 50.0, "head_dim": 128, "hidden_size": 4608, "num_attention_heads": 32, "num_key_value_heads": 16,
        "num_hidden_layers": 46, "max_position_embeddings": 8192, "query_pre_attn_scalar": 144, "rope_theta": 10000.0,
        "sliding_window": 4096,
    },
    # openai/gpt-oss-20b config.json: YaRN x32 (truncate false), 128-token windows on every other layer
    "GPT-OSS 20B": {
        "_name_or_path": "openai/gpt-oss-20b", "architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss",
        "hidden_size": 2880, "head_dim": 64, "num_attention_heads": 64, "num_key_value_heads": 8, "num_hidden_layers": 24,
        "layer_types": ["sliding_attention", "full_attention"] * 12, "max_position_embeddings": 131072, "rope_theta": 150000,
        "rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0, "original_max_position_embeddings": 4096,
                         "rope_type": "yarn", "truncate": False}, "sliding_window": 128,
    },
}

EXAMPLE_TEXTS: dict[str, str] = {name: json.dumps(cfg, indent=2) for name, cfg in REAL_CONFIGS.items()}
