"""Remote data sources (Kaggle, Hugging Face, torchvision, OGB): download once, verify, convert into a variant's files."""
