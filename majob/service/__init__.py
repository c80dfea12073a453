"""The training service: the ``TrainingService`` seam, its ModelArts backend, submit and jobs."""
