"""Using a trained model: batched generation, critique and self-critique."""
