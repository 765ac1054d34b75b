"""One LSTMN layer with the paper's additive intra-attention as a single autograd node.

The step-by-step module (`lstmn.py`) builds an autograd graph of ~40 small nodes per position and
re-concatenates the tapes at every step; this function runs the same equations over
preallocated tapes and writes its own backward pass, so that per position only the GEMMs the
recurrence forces remain sequential (forward: [W_s; W_qh] h~_t and W_k h_t; backward: their
transposes) and every weight gradient is one large GEMM over all B*T positions at the end.

Forward, position t (0-based), with masks as in lstmn.py (a padded position is never a key and
leaves the summary hs unchanged):

    q_t   = Qx_t + W_qh hs_{t-1}                     (Qx = W_qx x for all t, computed outside)
    u_ti  = tanh(P_i + q_t),  e_ti = v . u_ti,  s_t = masked softmax over real i < t
    [h~_t; c~_t] = sum_i s_ti [h_i; c_i]             (zero at t = 0: the tape is empty)
    z_t   = Gx_t + W_s h~_t                          (Gx = W_x x + b for all t, outside)
    c_t   = sig(f) c~_t + sig(i) tanh(g);  h_t = sig(o) tanh(c_t);  P_t = W_k h_t
    hs_t  = h~_t if position t is real, else hs_{t-1}

`tests/models/test_lstmn_fused.py` holds it to the step-by-step module and the loop reference,
values and float64 gradients.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor
from torch.autograd.function import once_differentiable

from attnlab.attention.core import masked_softmax
from attnlab.attention.ops import tanh_of_double_


class FusedAdditiveLSTMN(torch.autograd.Function):
    """apply(gx (B, T, 4H), qx (B, T, K), mask (B, T) bool, w_summary (4H, H), w_query_h (K, H),
    w_key (K, H), v (K,)) -> (tape (B, T, 2H) = [h_t; c_t] at every position, padded ones
    included; weights (B, T, T): s_t in row t over keys < t, rows of padded positions included).
    The caller masks the outputs; gradients flow to every input but the mask."""

    @staticmethod
    def forward(ctx: Any, gx: Tensor, qx: Tensor, mask: Tensor, w_summary: Tensor,
                w_query_h: Tensor, w_key: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        batch, length, four_h = gx.shape
        hidden, key_dim = four_h // 4, qx.shape[-1]
        tape = gx.new_zeros(batch, length, 2 * hidden)  # [h_t; c_t]
        keys = gx.new_zeros(batch, length, key_dim)  # 2 P_t = 2 W_k h_t: see `u` below
        summaries = gx.new_zeros(batch, length, 2 * hidden)  # [h~_t; c~_t]
        previous = gx.new_zeros(batch, length, hidden)  # hs_{t-1}, the query's summary at t
        gates = gx.new_empty(batch, length, four_h)  # sig(i), sig(f), sig(o), tanh(g)
        weights = gx.new_zeros(batch, length, length)
        # One GEMM per position gives z_t's summary part and the next query's: [W_s; W_qh] h~_t.
        w_both = torch.cat([w_summary, w_query_h]).t()  # (H, 4H + K)
        w_key2 = 2 * w_key.t()  # (H, K)
        query_part = gx.new_zeros(batch, key_dim)  # W_qh hs_{t-1}
        hs = gx.new_zeros(batch, hidden)
        # tanh(P_i + q_t) of every step, kept for the backward pass (as autograd would keep
        # it); each contiguous, which keeps tanh vectorised.
        hiddens = []
        for t in range(length):
            z = gx[:, t]
            if t > 0:
                q = qx[:, t] + query_part  # (B, K)
                previous[:, t] = hs
                # u = tanh(P + q), from 2 (P + q) (`fast_tanh`): u is the layer's largest tensor
                u = tanh_of_double_(torch.add(keys[:, :t], q.unsqueeze(1), alpha=2))
                hiddens.append(u)
                s = masked_softmax(u @ v, mask[:, :t])  # (B, t)
                weights[:, t, :t] = s
                summary = torch.bmm(s.unsqueeze(1), tape[:, :t]).squeeze(1)  # (B, 2H)
                summaries[:, t] = summary
                both = summary[:, :hidden] @ w_both  # (B, 4H + K)
                z = z + both[:, :four_h]
                real = mask[:, t : t + 1]
                query_part = torch.where(real, both[:, four_h:], query_part)
                hs = torch.where(real, summary[:, :hidden], hs)
            act = gates[:, t]
            torch.sigmoid(z[:, : 3 * hidden], out=act[:, : 3 * hidden])
            torch.tanh(z[:, 3 * hidden :], out=act[:, 3 * hidden :])
            i, f, o, g = act.chunk(4, dim=-1)
            c = tape[:, t, hidden:]
            torch.mul(i, g, out=c)
            c.addcmul_(f, summaries[:, t, hidden:])
            h = tape[:, t, :hidden]
            torch.mul(o, torch.tanh(c), out=h)
            torch.mm(h, w_key2, out=keys[:, t])
        ctx.save_for_backward(mask, w_summary, w_query_h, w_key, v, tape, summaries, previous,
                              gates, weights)
        ctx.hiddens = hiddens
        ctx.mark_non_differentiable(mask)
        return tape, weights

    @staticmethod
    @once_differentiable
    def backward(ctx: Any, d_tape: Tensor, d_weights: Tensor) -> tuple[Tensor | None, ...]:
        (mask, w_summary, w_query_h, w_key, v, tape, summaries, previous, gates,
         weights) = ctx.saved_tensors
        hiddens = ctx.hiddens
        batch, length, four_h = gates.shape
        hidden = four_h // 4
        d_tape = d_tape.clone()  # autograd hands zeros for an output nobody used
        d_keys = tape.new_zeros(batch, length, w_key.shape[0])
        d_gates = torch.empty_like(gates)  # dL/dz_t
        d_queries = tape.new_zeros(batch, length, w_key.shape[0])  # dL/dq_t
        d_v = torch.zeros_like(v)
        d_hs = tape.new_zeros(batch, hidden)  # dL/dhs_t, from later queries
        for t in range(length - 1, -1, -1):
            dh = d_tape[:, t, :hidden].addmm(d_keys[:, t], w_key)  # + W_k^T dP_t
            act = gates[:, t]
            i, f, o, g = act.chunk(4, dim=-1)
            c, c_summary = tape[:, t, hidden:], summaries[:, t, hidden:]
            tanh_c = torch.tanh(c)
            dc = d_tape[:, t, hidden:] + dh * o * (1 - tanh_c * tanh_c)
            dz = d_gates[:, t]
            torch.mul(dc * c_summary, f * (1 - f), out=dz[:, hidden : 2 * hidden])
            torch.mul(dc * g, i * (1 - i), out=dz[:, :hidden])
            torch.mul(dh * tanh_c, o * (1 - o), out=dz[:, 2 * hidden : 3 * hidden])
            torch.mul(dc * i, 1 - g * g, out=dz[:, 3 * hidden :])
            if t == 0:
                break
            real = mask[:, t : t + 1]
            routed = d_hs * real  # hs_t = h~_t at a real position: its gradient lands here
            d_hs = d_hs - routed
            d_summary = torch.cat([dz @ w_summary + routed, dc * f], dim=-1)  # (B, 2H)
            s = weights[:, t, :t]
            values = tape[:, :t]
            ds = torch.bmm(values, d_summary.unsqueeze(2)).squeeze(2) + d_weights[:, t, :t]
            d_tape[:, :t].baddbmm_(s.unsqueeze(2), d_summary.unsqueeze(1))
            de = s * (ds - (s * ds).sum(-1, keepdim=True))  # softmax backward; 0 at masked keys
            u = hiddens[t - 1]  # (B, t, K)
            d_v += torch.bmm(de.unsqueeze(1), u).sum(0).squeeze(0)
            du = (de.unsqueeze(2) * v).mul_(1 - u * u)  # de v (1 - u^2)
            d_keys[:, :t] += du
            dq = d_queries[:, t]
            torch.sum(du, dim=1, out=dq)
            d_hs.addmm_(dq, w_query_h)
        flat = batch * length
        d_w_summary = d_gates.reshape(flat, four_h).t() @ summaries[..., :hidden].reshape(
            flat, hidden)
        d_w_query_h = d_queries.reshape(flat, -1).t() @ previous.reshape(flat, hidden)
        d_w_key = d_keys.reshape(flat, -1).t() @ tape[..., :hidden].reshape(flat, hidden)
        return d_gates, d_queries, None, d_w_summary, d_w_query_h, d_w_key, d_v
