"""The symbolic layer: the Prolog bridge, the fact store, Phi_T, rules and beliefs."""
