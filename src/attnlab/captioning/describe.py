"""A captioning model in words: `describe` (the few words every report, card, page and log
uses) and `architecture` (the model card's rows)."""

from __future__ import annotations

from attnlab.models import CaptionerConfig


def describe(model: CaptionerConfig) -> str:
    """"soft attention (additive, global)", "hard attention (additive, hard (REINFORCE))"."""
    attention = model.decoder.attention
    return f"{'hard' if attention.hard else 'soft'} attention ({attention.describe()})"


def architecture(model: CaptionerConfig) -> list[tuple[str, str]]:
    """(part, what it is) for the image encoder, the decoder and the attention."""
    encoder, decoder = model.encoder, model.decoder
    if encoder.kind == "resnet":
        image = (f"{encoder.resnet} up to stage {encoder.resnet_stages} "
                 f"({'fine-tuned' if encoder.fine_tune else 'frozen'})")
    else:
        image = f"CNN, channels {encoder.channels}"
    attention = decoder.attention
    kind = (attention.describe() if attention.hard else
            f"{attention.describe()}, soft, doubly stochastic lambda "
            f"{attention.doubly_stochastic}")
    return [("image encoder", image),
            ("decoder", f"LSTM (Xu et al. 2015), embedding {decoder.embedding_dim}, hidden "
                        f"{decoder.hidden_dim}"),
            ("attention", kind)]
