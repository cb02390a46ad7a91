"""A character-level transformer language model, trained on a shipped text, then sampling from it.

    pip install -e ".[demo]" && python examples/char_transformer.py
    python examples/char_transformer.py --compile --steps 1500 --prompt "The sea"

A small GPT-style model over characters: token and position embeddings, pre-LayerNorm
causal self-attention blocks (nn.TransformerEncoderLayer with norm_first=True and a causal
mask), and an output layer that shares the token embedding's weight. It trains with AdamW and
a cosine learning-rate schedule on examples/data/tiny_corpus.txt (about 3 KB of text written
for this project), then samples new text one character at a time with a temperature.
Sampling always feeds a window of the same length (the prompt is padded on the left), so the
model's ops keep one shape and nothing compiles again while it writes. With --compile each
training step is one XLA program.
The default 1000 steps take several minutes on 2 CPU cores (100 steps with --compile took
about 30 s of CPU time here, compiling included); --steps 200 gives a first taste.
"""

import argparse
import math
import pathlib

from _progress import trange

import torchjax as torch
import torchjax.nn.functional as F
from torchjax import nn

CORPUS = pathlib.Path(__file__).resolve().parent / "data" / "tiny_corpus.txt"


class CharGPT(nn.Module):
    def __init__(self, vocab: int, block: int, dim: int = 64, heads: int = 4, layers: int = 2,
                 dropout: float = 0.1):
        super().__init__()
        self.block = block
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(block, dim)
        layer = nn.TransformerEncoderLayer(dim, heads, dim_feedforward=4 * dim,
                                           dropout=dropout, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.tok.weight  # tied: the output layer reads the embedding
        mask = torch.triu(torch.full((block, block), float("-inf")), diagonal=1)
        self.register_buffer("mask", mask, persistent=False)
        for emb in (self.tok, self.pos):  # small embeddings, as GPT-2: the tied logits start small
            nn.init.normal_(emb.weight, std=0.02)

    def forward(self, idx):
        t = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(t))
        x = self.blocks(x, mask=self.mask[:t, :t], is_causal=True)
        return self.head(self.norm(x))


def batches(data, block: int, batch: int, generator):
    """Random windows of the text: inputs and the same windows shifted by one character."""
    while True:
        starts = torch.randint(0, len(data) - block - 1, (batch,), generator=generator)
        offsets = starts.unsqueeze(1) + torch.arange(block + 1)
        chunk = data[offsets]
        yield chunk[:, :-1], chunk[:, 1:]


@torch.no_grad()
def sample(model, stoi, itos, prompt: str, length: int, temperature: float, generator) -> str:
    model.eval()
    pad = stoi.get(" ", 0)
    ids = [stoi[c] for c in prompt if c in stoi]
    out = list(ids)
    for _ in range(length):
        window = ([pad] * model.block + out)[-model.block:]  # always block characters long
        logits = model(torch.tensor([window]))[0, -1] / temperature
        nxt = torch.multinomial(F.softmax(logits, dim=-1), 1, generator=generator).item()
        out.append(nxt)
    model.train()
    return "".join(itos[i] for i in out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--block", type=int, default=64, help="context length in characters")
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--compile", action="store_true", help="each step as one XLA program")
    parser.add_argument("--prompt", default="The lamp")
    parser.add_argument("--length", type=int, default=300, help="characters to generate")
    parser.add_argument("--temperature", type=float, default=0.8)
    args = parser.parse_args(argv)

    torch.manual_seed(0)
    text = CORPUS.read_text()
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    itos = dict(enumerate(chars))
    data = torch.tensor([stoi[c] for c in text])
    print(f"{len(text)} characters, a vocabulary of {len(chars)}")

    model = CharGPT(len(chars), args.block)
    print(f"{sum(p.numel() for p in model.parameters())} parameters")
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.steps)

    def train_step(x, y):
        opt.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        return loss

    step = torch.compile(train_step) if args.compile else train_step
    stream = batches(data, args.block, args.batch, torch.Generator().manual_seed(0))
    bar = trange(args.steps, desc="training")
    for i in bar:
        x, y = next(stream)
        loss = step(x, y)
        if i % 10 == 0 or i == args.steps - 1:
            value = loss.item()
            bar.set_postfix(loss=f"{value:.3f}", ppl=f"{math.exp(value):.1f}")
    print(f"final training loss {value:.3f} (a uniform guess over the vocabulary: "
          f"{math.log(len(chars)):.3f})")

    text_out = sample(model, stoi, itos, args.prompt, args.length, args.temperature,
                      torch.Generator().manual_seed(1))
    print("\n--- sampled text ---")
    print(text_out)
    return value, text_out


if __name__ == "__main__":
    main()
