"""Sequence to sequence with a GRU encoder and an attention decoder, in the style of the
PyTorch tutorial "NLP From Scratch: Translation with a Sequence to Sequence Network and
Attention": Embedding + GRU (batch_first), Bahdanau attention (Wa, Ua, Va; bmm with the keys),
teacher forcing and greedy decoding with topk, NLLLoss over log_softmax, one Adam per network,
gradient clipping, and a packed-sequence encoder of variable lengths."""

import random
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
from torch.utils.data import DataLoader, RandomSampler, TensorDataset

from _record import finish, grad_norms, init_stats, record, rng, seed_parameters

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
SOS_token = 0
EOS_token = 1
MAX_LENGTH = 6


class EncoderRNN(nn.Module):
    def __init__(self, input_size, hidden_size, dropout_p=0.1):
        super(EncoderRNN, self).__init__()
        self.hidden_size = hidden_size
        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, input):
        embedded = self.dropout(self.embedding(input))
        output, hidden = self.gru(embedded)
        return output, hidden


class BahdanauAttention(nn.Module):
    def __init__(self, hidden_size):
        super(BahdanauAttention, self).__init__()
        self.Wa = nn.Linear(hidden_size, hidden_size)
        self.Ua = nn.Linear(hidden_size, hidden_size)
        self.Va = nn.Linear(hidden_size, 1)

    def forward(self, query, keys):
        scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
        scores = scores.squeeze(2).unsqueeze(1)
        weights = F.softmax(scores, dim=-1)
        context = torch.bmm(weights, keys)
        return context, weights


class AttnDecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size, dropout_p=0.1):
        super(AttnDecoderRNN, self).__init__()
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.attention = BahdanauAttention(hidden_size)
        self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, encoder_outputs, encoder_hidden, target_tensor=None):
        batch_size = encoder_outputs.size(0)
        decoder_input = torch.empty(batch_size, 1, dtype=torch.long, device=device).fill_(SOS_token)
        decoder_hidden = encoder_hidden
        decoder_outputs = []
        attentions = []

        for i in range(MAX_LENGTH):
            decoder_output, decoder_hidden, attn_weights = self.forward_step(
                decoder_input, decoder_hidden, encoder_outputs
            )
            decoder_outputs.append(decoder_output)
            attentions.append(attn_weights)

            if target_tensor is not None:
                # Teacher forcing: Feed the target as the next input
                decoder_input = target_tensor[:, i].unsqueeze(1)  # Teacher forcing
            else:
                # Without teacher forcing: use its own predictions as the next input
                _, topi = decoder_output.topk(1)
                decoder_input = topi.squeeze(-1).detach()  # detach from history as input

        decoder_outputs = torch.cat(decoder_outputs, dim=1)
        decoder_outputs = F.log_softmax(decoder_outputs, dim=-1)
        attentions = torch.cat(attentions, dim=1)

        return decoder_outputs, decoder_hidden, attentions

    def forward_step(self, input, hidden, encoder_outputs):
        embedded = self.dropout(self.embedding(input))

        query = hidden.permute(1, 0, 2)
        context, attn_weights = self.attention(query, encoder_outputs)
        input_gru = torch.cat((embedded, context), dim=2)

        output, hidden = self.gru(input_gru, hidden)
        output = self.out(output)

        return output, hidden, attn_weights


class PackedEncoder(nn.Module):
    """A bidirectional encoder over padded batches of different lengths."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.embedding = nn.Embedding(input_size, hidden_size, padding_idx=2)
        self.rnn = nn.GRU(hidden_size, hidden_size, num_layers=2, bidirectional=True)

    def forward(self, src, lengths):
        embedded = self.embedding(src)
        packed = pack_padded_sequence(embedded, lengths.cpu(), enforce_sorted=False)
        packed_outputs, hidden = self.rnn(packed)
        outputs, _ = pad_packed_sequence(packed_outputs, padding_value=0.0)
        hidden = torch.tanh(torch.cat((hidden[-2, :, :], hidden[-1, :, :]), dim=1))
        return outputs, hidden


def get_dataloader(batch_size, n_words=12, n=24):
    g = rng(0)
    input_ids = np.zeros((n, MAX_LENGTH), dtype=np.int32)
    target_ids = np.zeros((n, MAX_LENGTH), dtype=np.int32)
    for idx in range(n):
        length = int(g.integers(2, MAX_LENGTH))
        inp = g.integers(3, n_words, size=length)
        inp_ids = list(inp) + [EOS_token]
        tgt_ids = list(inp[::-1]) + [EOS_token]  # reverse the sentence
        input_ids[idx, :len(inp_ids)] = inp_ids
        target_ids[idx, :len(tgt_ids)] = tgt_ids
    train_data = TensorDataset(torch.LongTensor(input_ids).to(device),
                               torch.LongTensor(target_ids).to(device))
    train_sampler = RandomSampler(train_data, generator=torch.Generator().manual_seed(0)) \
        if False else None
    train_dataloader = DataLoader(train_data, sampler=train_sampler, batch_size=batch_size)
    return n_words, train_dataloader


def train_epoch(dataloader, encoder, decoder, encoder_optimizer, decoder_optimizer, criterion):
    total_loss = 0
    for data in dataloader:
        input_tensor, target_tensor = data

        encoder_optimizer.zero_grad()
        decoder_optimizer.zero_grad()

        encoder_outputs, encoder_hidden = encoder(input_tensor)
        decoder_outputs, _, _ = decoder(encoder_outputs, encoder_hidden, target_tensor)

        loss = criterion(
            decoder_outputs.view(-1, decoder_outputs.size(-1)),
            target_tensor.view(-1)
        )
        loss.backward()
        torch.nn.utils.clip_grad_norm_(encoder.parameters(), 5.0)
        torch.nn.utils.clip_grad_norm_(decoder.parameters(), 5.0)

        encoder_optimizer.step()
        decoder_optimizer.step()

        total_loss += loss.item()

    return total_loss / len(dataloader)


def evaluate(encoder, decoder, input_tensor):
    with torch.no_grad():
        encoder_outputs, encoder_hidden = encoder(input_tensor)
        decoder_outputs, decoder_hidden, decoder_attn = decoder(encoder_outputs, encoder_hidden)
        _, topi = decoder_outputs.topk(1)
        decoded_ids = topi.squeeze()
    return decoded_ids, decoder_attn


def main():
    random.seed(0)
    torch.manual_seed(0)
    hidden_size = 16
    batch_size = 8
    n_words, train_dataloader = get_dataloader(batch_size)
    encoder = EncoderRNN(n_words, hidden_size, dropout_p=0.0).to(device)
    decoder = AttnDecoderRNN(hidden_size, n_words, dropout_p=0.0).to(device)
    record("init_encoder", init_stats(encoder))
    seed_parameters(encoder, seed=1)
    seed_parameters(decoder, seed=2)
    encoder_optimizer = optim.Adam(encoder.parameters(), lr=0.01)
    decoder_optimizer = optim.Adam(decoder.parameters(), lr=0.01)
    criterion = nn.NLLLoss()

    # one step by hand first, to compare gradients before clipping
    input_tensor, target_tensor = next(iter(train_dataloader))
    encoder_outputs, encoder_hidden = encoder(input_tensor)
    decoder_outputs, _, attn = decoder(encoder_outputs, encoder_hidden, target_tensor)
    loss = criterion(decoder_outputs.view(-1, decoder_outputs.size(-1)), target_tensor.view(-1))
    loss.backward()
    record("first_loss", loss)
    record("attention", attn[0, 0])
    record("grad_encoder", grad_norms(encoder))
    record("grad_decoder", grad_norms(decoder))

    start = time.time()
    losses = []
    for epoch in range(1, 4):
        losses.append(train_epoch(train_dataloader, encoder, decoder, encoder_optimizer,
                                  decoder_optimizer, criterion))
    _ = time.time() - start
    record("epoch_losses", losses)
    encoder.eval()
    decoder.eval()
    decoded, attn = evaluate(encoder, decoder, input_tensor[:2])
    record("decoded", decoded.tolist())
    record("eval_attention", attn[1, 2])

    # variable-length batches through a packed bidirectional encoder
    packed_encoder = PackedEncoder(n_words, 8)
    seed_parameters(packed_encoder, seed=3)
    lengths = torch.tensor([5, 3, 4, 2])
    src = torch.from_numpy(rng(4).integers(3, n_words, size=(5, 4)).astype(np.int64))
    for b, n in enumerate(lengths.tolist()):
        src[n:, b] = 2
    outputs, hidden = packed_encoder(src, lengths)
    (outputs.sum() + hidden.pow(2).sum()).backward()
    record("packed_outputs", outputs[:, 1, :3])
    record("packed_hidden", hidden[2])
    record("packed_grads", grad_norms(packed_encoder))
    finish()


if __name__ == '__main__':
    main()
