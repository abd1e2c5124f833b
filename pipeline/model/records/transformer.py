"""A decoder-only transformer as a concrete run gives it: layers, widths, heads, vocabulary,
MLP type and experts (docs/model.md, "Realistic physics")."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Mlp(StrEnum):
    """MLP block type: two matrices with GeLU, or three with SwiGLU (Shazeer 2020)."""

    GELU = "gelu"
    SWIGLU = "swiglu"


@dataclass(frozen=True, slots=True)
class TransformerShape:
    """A decoder-only transformer: the model half of a run's contract keys."""

    layers: int
    hidden: int
    ffn_hidden: int
    heads: int
    kv_heads: int
    vocab: int
    seq_len: int
    mlp: Mlp = Mlp.GELU
    experts: int = 1
    """MLP experts per layer; 1 is a dense transformer, more a mixture of experts in every
    layer (Lepikhin et al. 2020, GShard; Fedus et al. 2021, Switch Transformer)."""
    top_k: int = 1
    """Experts each token is routed to (1: Switch; 2: GShard)."""
    dropout: bool = True
    """Attention and hidden dropout, as GPT and Megatron-LM train (their masks are stored for
    the backward pass, Korthikanti et al. 2022 §4.1); Llama 3 trains without."""
    tied_embeddings: bool = True
    """The output layer reuses the input embedding's V x h matrix, as GPT-2/3 and Megatron-LM
    (Radford et al. 2019; Shoeybi et al. 2019); False for separate matrices, as Llama 3
    (its released weights hold both, 2 · V·h of its 405B parameters)."""

    @property
    def embedding_matrices(self) -> int:
        """V x h matrices of the model: 1 when the output layer is tied to the embedding, else 2."""
        return 1 if self.tied_embeddings else 2

    @property
    def head_dim(self) -> int:
        """d_head = hidden / heads."""
        return self.hidden // self.heads

    @property
    def kv_width(self) -> int:
        """Width of K (and of V): kv_heads · d_head."""
        return self.kv_heads * self.head_dim

    @property
    def mlp_matrices(self) -> int:
        """Weight matrices of hidden x ffn_hidden in the MLP: 2 (GeLU) or 3 (SwiGLU)."""
        return 3 if self.mlp is Mlp.SWIGLU else 2
