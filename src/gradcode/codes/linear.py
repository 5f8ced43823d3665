"""``LinearCode``: the shared implementation of the codes whose messages are fixed linear
combinations of the partial-gradient chunks (most of them; ``gradcode.codes.base`` has the
interface).

Linear codes (most of them) are described by an encoding tensor ``E`` of shape
``(num_keys, k, m)``: the message with key index ``q`` is ``sum_{p,u} E[q, p, u] * g_p[u]``,
where ``g_p[u]`` is the ``u``-th of the ``m`` equal chunks of partial gradient ``p``. Decoding a
responder set ``R`` means finding ``A`` of shape ``(m, |R|)`` with
``A @ E[R].reshape(|R|, k * m) == kron(I_m, 1_k)``-shaped target, so that chunk ``u`` of the
gradient is ``sum_r A[u, r] * message_r``. ``LinearCode`` solves and caches ``A`` per responder
set; schemes override ``_solve`` with their own decoder (Vandermonde, congruence classes, ...).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import ClassVar

import numpy as np

from gradcode.codes.base import DecodeResult, GradientCode, MessageKey, NotDecodableError
from gradcode.codes.combine import combine_chunks, message_vectors, split_chunks
from gradcode.lru import LRUCache


class LinearCode(GradientCode):
    """A code whose messages are fixed linear combinations of the partial-gradient chunks.

    Subclasses build ``self._encoding`` (shape ``(len(all_message_keys()), k, m)``) in their
    constructor and may override ``_solve`` (exact decoding coefficients for a responder set)
    and ``is_decodable``. Coefficients are cached per responder set, so a second decode of the
    same set costs one small matrix product over the messages.
    """

    cache_size: ClassVar[int] = 4096
    #: tolerance on the decoding residual ``||A E_R - T||_max`` of the generic solver.
    residual_tol: ClassVar[float] = 1e-8

    _encoding: np.ndarray

    def _init_linear(self, encoding: np.ndarray) -> None:
        keys = self.all_message_keys()
        expected = (len(keys), self.k, self.m)
        if encoding.shape != expected:
            raise AssertionError(f"encoding has shape {encoding.shape}, expected {expected}")
        self._encoding = np.ascontiguousarray(encoding, dtype=np.float64)
        self._key_index = {key: q for q, key in enumerate(keys)}
        #: per message key: the partials it needs and their coefficients ``(need, m)``
        self._encoders: dict[MessageKey, tuple[int, np.ndarray]] = {}
        self._cache: LRUCache[tuple[tuple, np.ndarray, float]] = LRUCache(self.cache_size)
        self._target = np.kron(np.eye(self.m), np.ones((1, self.k)))  # (m, m * k), u-major
        for worker in range(self.n):
            allowed = set(self.partitions(worker))
            for key in self.message_keys(worker):
                used = np.flatnonzero(np.abs(self._encoding[self._key_index[key]]).sum(axis=1))
                if not set(used.tolist()) <= allowed:
                    raise AssertionError(
                        f"{self.name}: message {key!r} uses partitions outside its worker's"
                    )

    def encoding_matrix(self) -> np.ndarray:
        """The encoding tensor, shape ``(num_keys, k, m)``."""
        return self._encoding.copy()

    def encode_message(self, key: MessageKey, partials: np.ndarray) -> np.ndarray:
        found = self._encoders.get(key)
        if found is None:
            # a key's coefficients once: finding them again was two thirds of encoding a
            # message at l = 37 (5 us of 7.7), which verification does for every probe
            parts = self.partitions(self.worker_of(key))
            need = self.message_prefix(key)
            coefficients = self._encoding[self._key_index[key]][list(parts[:need])]  # (need, m)
            found = self._encoders[key] = (need, coefficients)
        need, coefficients = found
        partials = np.asarray(partials, dtype=np.float64)
        if partials.ndim != 2 or partials.shape[0] < need:
            raise ValueError(
                f"{self.name}: message {key!r} needs partials of shape ({need}, l) "
                f"(got {partials.shape})"
            )
        if need == 1 and self.m == 1:
            # one partial's multiple: what the einsum below gives, without its 0.1 ms a message
            # on a worker whose cores the other workers share (uncoded, d = 1, first messages)
            return partials[0] * coefficients[0, 0]
        chunks = split_chunks(partials[:need], self.m)  # (need, m, width)
        return np.einsum("pu,puw->w", coefficients, chunks)

    def encode(self, worker: int, partials: np.ndarray) -> np.ndarray:
        return self.encode_message(self.message_keys(worker)[-1], partials)

    # -- decoding ---------------------------------------------------------------------------
    def _solve(self, keys: tuple[MessageKey, ...]) -> tuple[tuple[MessageKey, ...], np.ndarray]:
        """Decoding coefficients for responders ``keys`` (sorted).

        Returns the keys actually used and ``A`` of shape ``(m, len(used))``. The generic
        solver uses least squares on the encoding rows and checks the residual.
        """
        if not keys:
            raise NotDecodableError(
                f"{self.name}: no messages in hand", needed=max(self.min_responders(), 1)
            )
        rows = np.stack([self._encoding[self._key_index[key]] for key in keys])  # (R, k, m)
        system = rows.transpose(0, 2, 1).reshape(len(keys), self.m * self.k)  # (R, m*k)
        solution, *_ = np.linalg.lstsq(system.T, self._target.T, rcond=None)
        coefficients = solution.T  # (m, R)
        residual = np.abs(coefficients @ system - self._target).max()
        if not residual <= self.residual_tol:
            raise NotDecodableError(
                f"{self.name}: messages {sorted(keys, key=repr)} do not determine the gradient",
                needed=max(self.min_responders() - len(keys), 1),
            )
        return keys, coefficients

    def is_decodable(self, keys: Iterable[MessageKey]) -> bool:
        try:
            self._coefficients(tuple(keys))
        except NotDecodableError:
            return False
        return True

    def _coefficients(self, keys: tuple) -> tuple[tuple, np.ndarray, float]:
        cache_key = tuple(sorted(keys, key=repr))
        hit = self._cache.get(cache_key)
        if hit is not None:
            return hit
        unknown = [key for key in cache_key if key not in self._key_index]
        if unknown:
            raise ValueError(f"{self.name}: unknown message keys {unknown}")
        used, coefficients = self._solve(cache_key)
        condition = self._condition(used)
        entry = (used, np.ascontiguousarray(coefficients, dtype=np.float64), condition)
        return self._cache.put(cache_key, entry)

    def _condition(self, used: tuple) -> float:
        """Condition number of the system the decoder inverted (override for exact values)."""
        rows = np.stack([self._encoding[self._key_index[key]] for key in used])
        system = rows.transpose(0, 2, 1).reshape(len(used), self.m * self.k)
        return float(np.linalg.cond(system))

    def decode_result(self, messages: Mapping[MessageKey, np.ndarray], length: int) -> DecodeResult:
        used, coefficients, condition = self._coefficients(tuple(messages))
        return DecodeResult(self._combine(messages, used, coefficients, length), used, condition)

    def _combine(
        self,
        messages: Mapping[MessageKey, np.ndarray],
        used: Sequence[MessageKey],
        coefficients: np.ndarray,
        length: int,
    ) -> np.ndarray:
        """``sum_r coefficients[u, r] * messages[used[r]]`` per chunk ``u``, ``(length,)``."""
        vectors = message_vectors(self.name, messages, used, self.message_length(length))
        out = combine_chunks(np.empty((self.m, len(vectors[0]))), coefficients, vectors)
        return out.reshape(-1)[:length]
