"""Hugging Face style: accelerate's Accelerator for the loop, a Trainer's TrainingArguments with
an output_dir, save_pretrained into a relative folder, a hub id that is no path."""
import argparse

import torch
from accelerate import Accelerator
from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name_or_path", default="bert-base-uncased")  # clean: @false-alarm
    parser.add_argument("--train_file", default="data/train.csv")  # expect: MA101
    args, _ = parser.parse_known_args()  # expect: MA103
    accelerator = Accelerator()  # expect: MA211 @framework
    model = AutoModelForSequenceClassification.from_pretrained(args.model_name_or_path, num_labels=2)
    training_args = TrainingArguments(output_dir="hf_out", num_train_epochs=1)  # expect: MA102 @framework
    trainer = Trainer(model=model, args=training_args)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
    model, optimizer = accelerator.prepare(model, optimizer)
    accelerator.wait_for_everyone()
    accelerator.unwrap_model(model).save_pretrained("final_model")  # expect: MA102 @framework
    trainer.save_model()


if __name__ == "__main__":
    main()
