def score(submission, answers):
    return 0.0
