"""dmlimits' Hydra plugin: the sweeper of ``dmlimits -m`` (`hydra_plugins.dmlimits.sweeper`)."""
