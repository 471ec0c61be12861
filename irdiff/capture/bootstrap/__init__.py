"""The directory ``irdiff capture`` puts first on the captured program's ``PYTHONPATH`` (holds ``sitecustomize``)."""
