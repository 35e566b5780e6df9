"""Hierarchical Gaussian priors for groups of rows or columns (families of models, categories
of benchmarks), as one Gibbs step shared by every chain.

Settings of one base model (`o3-high`, `o3@low`), sizes of one family (`qwen3-8b`,
`qwen3-32b`) or benchmarks of one kind (coding, math) behave alike. Instead of one population
prior for every vector, each vector is drawn around its group's mean and the group means
around the population mean:

    x_i ~ N(c_g(i), L^-1),   c_g ~ N(m, (kappa L)^-1),   m ~ N(0, (beta0 L)^-1),
    L ~ Wishart(I, d),       kappa ~ Gamma(shape, rate).

kappa is learned: large when the groups' means hardly differ (their members are no more alike
than any two vectors), small when members of a group are much closer to each other than to
the rest. A vector without a group is a group of its own, so its prior is the population's,
N(m, (1 + 1 / kappa) L^-1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

# Normal-Wishart pseudo-count of the population mean (as the ungrouped prior).
_BETA0 = 2.0


@dataclass(frozen=True)
class Groups:
    """Group codes of n items: `codes[i]` in 0..G-1; `labels[g]` is the group's name, or None
    for an item without a group (a group of its own)."""

    codes: np.ndarray  # (n,)
    labels: tuple[str | None, ...]  # (G,)
    size: np.ndarray  # (G,)
    order: np.ndarray  # items sorted by group, for segment sums
    starts: np.ndarray  # first position of each group in `order`

    @property
    def n_named(self) -> int:
        """Groups with at least two members: the ones that carry information."""
        return int(((self.size > 1) & np.array([lab is not None for lab in self.labels])).sum())

    def index(self, label: str | None) -> int | None:
        """The code of a named group, or None when the label is unknown or missing."""
        if label is None or label == "":
            return None
        return _label_index(self.labels).get(label)


@lru_cache(maxsize=32)
def _label_index(labels: tuple[str | None, ...]) -> dict[str, int]:
    return {lab: g for g, lab in enumerate(labels) if lab is not None}


def encode_groups(labels: Sequence[str | None] | None, n: int, name: str) -> Groups | None:
    """Groups of `n` items from their labels (None or "" = no group); None when no two items
    share a label (the grouped prior would then be the ungrouped one). The codes follow the
    sorted labels, so the encoding does not depend on the order of the items."""
    if labels is None:
        return None
    labels = list(labels)
    if len(labels) != n:
        raise ValueError(f"{name} has {len(labels)} entries, expected {n}")
    clean: list[str | None] = []
    for k, lab in enumerate(labels):
        if lab is None or (isinstance(lab, float) and np.isnan(lab)) or lab == "":
            clean.append(None)
        elif isinstance(lab, str):
            clean.append(lab)
        else:
            raise ValueError(f"{name}[{k}] is {lab!r}; give a group name (str) or None")
    named = sorted({lab for lab in clean if lab is not None})
    counts = {lab: 0 for lab in named}
    for lab in clean:
        if lab is not None:
            counts[lab] += 1
    if not any(c > 1 for c in counts.values()):
        return None
    index = {lab: g for g, lab in enumerate(named)}
    codes = np.empty(n, dtype=int)
    out_labels: list[str | None] = list(named)
    for i, lab in enumerate(clean):
        if lab is None:
            codes[i] = len(out_labels)
            out_labels.append(None)
        else:
            codes[i] = index[lab]
    size = np.bincount(codes, minlength=len(out_labels))
    order = np.argsort(codes, kind="stable")
    starts = np.concatenate([[0], np.cumsum(size)[:-1]])
    return Groups(codes, tuple(out_labels), size, order, starts)


@lru_cache(maxsize=16)
def _strict_lower(d: int) -> tuple[np.ndarray, np.ndarray]:
    return np.tril_indices(d, -1)


def sample_wishart(
    rng: np.random.Generator, scale_inv: np.ndarray, dof: float | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Draws (C, d, d) of Wishart(dof, inv(scale_inv)) by the Bartlett decomposition, and a
    factor A of their inverses (A A^T = draw^-1) for sampling Gaussians of that precision."""
    n_chains, d, _ = scale_inv.shape
    w = np.linalg.inv(scale_inv)
    chol_w = np.linalg.cholesky((w + w.transpose(0, 2, 1)) / 2)
    bartlett = np.zeros((n_chains, d, d))
    lower = _strict_lower(d)
    bartlett[:, lower[0], lower[1]] = rng.standard_normal((n_chains, len(lower[0])))
    dofs = np.asarray(dof, dtype=float).reshape(-1, 1) - np.arange(d)
    bartlett[:, np.arange(d), np.arange(d)] = np.sqrt(
        rng.chisquare(np.broadcast_to(dofs, (n_chains, d)))
    )
    root = chol_w @ bartlett  # lower triangular: draw = root root^T
    return root @ root.transpose(0, 2, 1), np.linalg.inv(root).transpose(0, 2, 1)


class GroupPrior:
    """State and Gibbs step of the hierarchical prior of one side (rows or columns), all
    chains at once. `sample(rng, x)` updates group means, population mean, precision and
    kappa given the current vectors x (C, n, d) and returns each item's prior mean (C, n, d)
    and the shared within-group precision (C, d, d)."""

    def __init__(
        self,
        groups: Groups,
        n_chains: int,
        d: int,
        kappa_shape: float = 1.0,
        kappa_rate: float = 1.0,
    ) -> None:
        self.groups = groups
        n_groups = len(groups.labels)
        self.centre = np.zeros((n_chains, n_groups, d))
        self.mean = np.zeros((n_chains, d))
        self.kappa = np.ones(n_chains)
        self.kappa_shape = kappa_shape
        self.kappa_rate = kappa_rate

    def _group_sums(self, x: np.ndarray) -> np.ndarray:
        g = self.groups
        return np.add.reduceat(x[:, g.order], g.starts, axis=1)

    def sample(self, rng: np.random.Generator, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        g = self.groups
        n_chains, n, d = x.shape
        n_groups = len(g.labels)
        kappa = self.kappa[:, None, None]
        # precision | x, centres, mean, kappa
        dev = x - self.centre[:, g.codes]
        between = self.centre - self.mean[:, None, :]
        scatter = (
            np.eye(d)
            + dev.transpose(0, 2, 1) @ dev
            + kappa * (between.transpose(0, 2, 1) @ between)
            + _BETA0 * (self.mean[:, :, None] * self.mean[:, None, :])
        )
        precision, cov_chol = sample_wishart(rng, scatter, d + n + n_groups + 1)
        # population mean | precision, centres, kappa
        weight = _BETA0 + self.kappa * n_groups
        mean = self.kappa[:, None] * self.centre.sum(axis=1) / weight[:, None]
        noise = (cov_chol @ rng.standard_normal((n_chains, d, 1)))[..., 0]
        self.mean = mean + noise / np.sqrt(weight)[:, None]
        # group means | precision, population mean, kappa, members
        pseudo = self.kappa[:, None] + g.size[None, :]  # (C, G)
        centre = (kappa * self.mean[:, None, :] + self._group_sums(x)) / pseudo[..., None]
        noise = (cov_chol[:, None] @ rng.standard_normal((n_chains, n_groups, d, 1)))[..., 0]
        self.centre = centre + noise / np.sqrt(pseudo)[..., None]
        # kappa | centres, population mean, precision
        between = self.centre - self.mean[:, None, :]
        quad = ((between @ precision) * between).sum(axis=(1, 2))
        self.kappa = rng.gamma(
            self.kappa_shape + n_groups * d / 2.0, 1.0 / (self.kappa_rate + quad / 2.0)
        )
        return self.centre[:, g.codes], precision

    def new_member_prior(self, precision: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(mean, precision) of a vector of a group not seen in the fit: the population's,
        N(m, (1 + 1 / kappa) L^-1)."""
        shrink = (self.kappa / (1.0 + self.kappa))[:, None, None]
        return self.mean.copy(), precision * shrink
