"""The Bayesian layer: per-source reliability and conflict resolution.

Submodules (imported on demand; ``import truthkeeper`` never imports JAX or NumPy):

- :mod:`.book`: conjugate Beta reliability per source under ordered tier priors;
- :mod:`.models`: NumPyro models (hierarchical reliability; Bayesian Dawid-Skene);
- :mod:`.inference`: NUTS and SVI runners;
- :mod:`.ds`: variational Bayes for the Dawid-Skene family (reliability from agreement);
- :mod:`.calibration`: Brier, log loss, ECE, reliability diagrams, interval coverage;
- :mod:`.crowd`, :mod:`.evaluate`: loaders and the ``truthkeeper eval crowd`` evaluation.
"""
