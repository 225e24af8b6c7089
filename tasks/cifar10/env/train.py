"""Starter script: classify 32x32 colour images with a small convolutional network.

Reads train.npz (images, labels) and test.npz (images, ids) from the current
directory, trains a LeNet-style network for a few epochs while reporting its
accuracy on a held-out tenth of the training images, then predicts every test
image and writes submission.csv with the columns id and label.
Uses a GPU when one is available.
"""

import numpy as np
import pandas as pd
import torch
from torch import nn

EPOCHS = 3
BATCH_SIZE = 64
LEARNING_RATE = 1e-3

torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def to_tensor(images: np.ndarray) -> torch.Tensor:
    """uint8 images (N, 32, 32, 3) -> float tensor (N, 3, 32, 32) scaled to [-1, 1]."""
    return torch.from_numpy(images).permute(0, 3, 1, 2).float().div(127.5).sub(1.0)


class SmallNet(nn.Module):
    def __init__(self, n_classes: int = 10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 6, 5), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(16 * 5 * 5, 120), nn.ReLU(),
            nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, n_classes),
        )

    def forward(self, x):
        return self.classifier(self.features(x))


def predict(model: nn.Module, images: torch.Tensor) -> np.ndarray:
    model.eval()
    with torch.no_grad():
        scores = [model(batch.to(device)).cpu() for batch in images.split(512)]
    return torch.cat(scores).argmax(dim=1).numpy()


train = np.load("train.npz")
test = np.load("test.npz")
images, labels = to_tensor(train["images"]), torch.from_numpy(train["labels"]).long()

# Keep a tenth of the training images aside to measure the model.
order = torch.randperm(len(labels), generator=torch.Generator().manual_seed(1))
n_val = len(labels) // 10
val_idx, fit_idx = order[:n_val], order[n_val:]

model = SmallNet().to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
loss_fn = nn.CrossEntropyLoss()
for epoch in range(EPOCHS):
    model.train()
    for batch in fit_idx[torch.randperm(len(fit_idx))].split(BATCH_SIZE):
        x, y = images[batch].to(device), labels[batch].to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
    fit_acc = (predict(model, images[fit_idx]) == labels[fit_idx].numpy()).mean()
    val_acc = (predict(model, images[val_idx]) == labels[val_idx].numpy()).mean()
    print(f"Epoch {epoch + 1}: train accuracy {fit_acc:.4f}, validation accuracy {val_acc:.4f}")

predictions = predict(model, to_tensor(test["images"]))
submission = pd.DataFrame({"id": test["ids"], "label": predictions})
submission.to_csv("submission.csv", index=False)
print(f"Wrote submission.csv with {len(submission)} rows")
